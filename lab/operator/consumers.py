"""The queue's WebSocket: members of the tenant follow its channel-layer group and get each new
card (if it matches their filters) and each changed card, drawn for what they may do.

The right to a card is checked on every push (the session still signed in as the user, the user
active, the membership there), and the socket closes with 4403 as soon as it is gone: at once
when the membership is deleted or the session signs out (lab.accounts.revocation), at the next
card otherwise."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from lab.accounts import revocation
from lab.accounts.access import role_in, role_now
from lab.accounts.roles import can_act
from lab.operator.filters import MAX_ID, BadFilter, QueueFilter, parse_filter
from lab.operator.live import CardMessage, cards_since, queue_group

CLOSE_BAD_FILTER = 4400
CLOSE_LOG_IN = 4403  # nobody is logged in on this socket, or no longer
CLOSE_NOT_FOUND = 4404  # not a member of the tenant, or no such tenant


class QueueConsumer(AsyncWebsocketConsumer):
    """One queue page's socket; it only listens."""

    group: str | None = None
    closed = False

    async def connect(self) -> None:
        tenant: str = self.scope["url_route"]["kwargs"]["tenant"]
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self._refuse(CLOSE_LOG_IN)
            return
        role = await database_sync_to_async(role_in)(user, tenant)
        if role is None:
            await self._refuse(CLOSE_NOT_FOUND)
            return
        query = parse_qs(self.scope.get("query_string", b"").decode(), keep_blank_values=True)
        # The newest record the page showed; the filters are the page's own.
        after = query.pop("after", ["0"])
        try:
            self.filter: QueueFilter = parse_filter(query)
            self.after = _record_id(after)
        except BadFilter:
            await self._refuse(CLOSE_BAD_FILTER)
            return
        self.may_act = can_act(role)
        self.tenant = tenant
        self.user_id: int = user.pk
        self.session_key: str | None = self.scope["session"].session_key
        self.group = queue_group(tenant)
        self.rights = [revocation.user_group(user.pk)]
        if self.session_key:
            self.rights.append(revocation.session_group(self.session_key))
        for right in self.rights:
            await self.channel_layer.group_add(right, self.channel_name)
        # Joined before reading what the page lacks: nothing stored in between is missed (a
        # card sent twice is dropped by static/js/queue.js).
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        if self.filter.before is None:
            missed = await database_sync_to_async(cards_since)(
                tenant, self.filter, after=self.after, may_act=self.may_act
            )
            for html in missed:
                await self.send(text_data=html)

    async def _refuse(self, code: int) -> None:
        await self.accept()
        await self.close(code)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            for group in (self.group, *self.rights):
                await self.channel_layer.group_discard(group, self.channel_name)

    async def _still_allowed(self) -> bool:
        """Check the right afresh; once it is gone, leave the groups and close (4403)."""
        if self.closed:
            return False
        role = await database_sync_to_async(role_now)(self.session_key, self.user_id, self.tenant)
        if role is None:
            await self._revoke()
            return False
        self.may_act = can_act(role)
        return True

    async def _revoke(self) -> None:
        if self.closed:
            return
        self.closed = True
        await self.disconnect(CLOSE_LOG_IN)
        await self.close(CLOSE_LOG_IN)

    async def access_changed(self, event: dict[str, Any]) -> None:
        await self._still_allowed()

    async def access_revoked(self, event: dict[str, Any]) -> None:
        await self._revoke()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """The page sends nothing; anything it does send is ignored."""

    async def queue_card(self, event: dict[str, Any]) -> None:
        card = CardMessage.model_validate(event)
        facets = {"severity": card.severity, "category": card.category, "agent": card.agent}
        if card.mode == "new" and not self.filter.matches(**facets, state=card.state):
            return
        if not await self._still_allowed():
            return
        await self.send(text_data=card.html_act if self.may_act else card.html_view)


def _record_id(given: list[str]) -> int:
    if len(given) != 1 or not given[0].isdigit() or int(given[0]) > MAX_ID:
        raise BadFilter(f"after {given!r} is not a record id")
    return int(given[0])

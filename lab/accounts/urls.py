from __future__ import annotations

from django.urls import path

from lab.accounts import views

urlpatterns = [
    path("login/", views.login, name="login"),
    path("logout/", views.logout, name="logout"),
    path("tokens/", views.tokens, name="account_tokens"),
    path("tokens/revoke/", views.token_revoke, name="account_token_revoke"),
]

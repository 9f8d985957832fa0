"""nginx in front of the web processes: WebSocket-aware, least-connections, on loopback."""

from __future__ import annotations

import http.client
import os
import pwd
from collections.abc import Sequence
from pathlib import Path

from lab.cluster.packages import ensure
from lab.cluster.processes import Child

ROOT = Path(__file__).resolve().parents[2]
SHARED_CONF = ROOT / "deploy" / "nginx" / "lab-http.conf"
READY_S = 60.0
# nginx's workers drop root; Debian's package makes this user.
WORKER_USER = "www-data"


def render(*, listen: int, upstreams: Sequence[int], state: Path, worker_user: str | None) -> str:
    """The whole nginx.conf for one launcher: its paths under `state`, one server per upstream."""
    temp = state / "nginx"
    servers = "\n".join(f"        server 127.0.0.1:{port};" for port in upstreams)
    temp_paths = "\n".join(
        f"    {kind}_temp_path {temp / kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    user = f"user {worker_user};\n" if worker_user else ""
    return f"""{user}daemon off;
worker_processes 1;
pid {state / "nginx.pid"};
error_log {state / "nginx-error.log"} warn;
events {{
    worker_connections 4096;
}}
http {{
    access_log {state / "nginx-access.log"};
{temp_paths}
    uwsgi_temp_path {temp / "uwsgi"};
    scgi_temp_path {temp / "scgi"};
    include {SHARED_CONF};
    upstream lab {{
        least_conn;
{servers}
    }}
    server {{
        listen 127.0.0.1:{listen};
        location / {{
            proxy_pass http://lab;
        }}
    }}
}}
"""


def answers(port: int) -> bool:
    """The front page comes back 200 through the proxy (so at least one upstream serves)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def start(*, listen: int, upstreams: Sequence[int], state: Path) -> Child:
    program = ensure("nginx")["nginx"]
    temp = state / "nginx"
    temp.mkdir(exist_ok=True)
    worker_user = WORKER_USER if os.geteuid() == 0 else None
    if worker_user:
        entry = pwd.getpwnam(worker_user)
        os.chown(temp, entry.pw_uid, entry.pw_gid)
    conf = state / "nginx.conf"
    conf.write_text(
        render(listen=listen, upstreams=upstreams, state=state, worker_user=worker_user)
    )
    child = Child(
        "nginx",
        [str(program), "-e", str(state / "nginx-error.log"), "-p", str(temp), "-c", str(conf)],
        log=state / "nginx.log",
        env=os.environ,
        cwd=state,
    )
    child.wait_ready(lambda: answers(listen), READY_S)
    return child

"""The loopback preload (``loopback.cjs``, see ``peers.py``) under the machine's ``node``:
wildcard listens end up on 127.0.0.1, the bind of ``listen(0)`` stays synchronous, other
addresses are left alone, and a Node without the internal it wraps refuses to run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from . import peers

#: Prints, as one JSON object, the address of each server: ``sync`` right after
#: ``listen(0)``, the others once they listen.
SCRIPT = r"""
const net = require('node:net');
const http = require('node:http');
const out = {};
const servers = [];
const sync = net.createServer();
servers.push(sync);
sync.listen(0);
out.sync = sync.address();
const cases = [
  ['any', net.createServer(), [0, '0.0.0.0']],
  ['ipv6-any', net.createServer(), [{ port: 0, host: '::', ipv6Only: true }]],
  ['http', http.createServer(), [0]],
  ['explicit', net.createServer(), [0, '127.0.0.1']],
];
let waiting = cases.length;
for (const [name, server, args] of cases) {
  servers.push(server);
  server.on('error', (err) => { console.error(name, err); process.exit(3); });
  server.listen(...args, () => {
    out[name] = server.address();
    if (--waiting === 0) {
      console.log(JSON.stringify(out));
      for (const s of servers) s.close();
    }
  });
}
"""


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    return node


def _run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _addresses(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    addresses: dict[str, Any] = json.loads(result.stdout)
    return addresses


def test_the_preload_is_in_the_repository() -> None:
    """Both users find it inside the checkout: the interop tests and the conformance
    harness (``conformance/run.py`` names the same file)."""
    assert peers.LOOPBACK_PRELOAD.is_file()
    harness = (peers.ROOT / "conformance" / "run.py").read_text()
    assert '"tests" / "interop" / "loopback.cjs"' in harness


@pytest.mark.parametrize("how", ["--require", "NODE_OPTIONS"])
def test_wildcard_listens_bind_loopback(how: str) -> None:
    """``listen(0)`` (its address read synchronously), ``listen(0, '0.0.0.0')``, an IPv6-only
    ``::`` listen and an HTTP server all report 127.0.0.1; an explicit address is kept."""
    node = _node()
    if how == "--require":
        result = _run([node, "--require", os.fspath(peers.LOOPBACK_PRELOAD), "-e", SCRIPT])
    else:
        env = {**os.environ, "NODE_OPTIONS": peers.loopback_node_options()}
        result = _run([node, "-e", SCRIPT], env=env)
    addresses = _addresses(result)
    assert set(addresses) == {"sync", "any", "ipv6-any", "http", "explicit"}
    for name, address in addresses.items():
        assert address["address"] == "127.0.0.1", (name, address)
        assert address["family"] in ("IPv4", 4), (name, address)
        assert address["port"] > 0, (name, address)


def test_without_the_preload_node_binds_the_wildcard() -> None:
    """The control: the same script without the preload listens beyond loopback, so the
    test above sees the preload's doing."""
    script = (
        "const s = require('node:net').createServer();"
        "s.listen(0, '0.0.0.0', () => { console.log(JSON.stringify(s.address())); s.close(); });"
    )
    assert _addresses(_run([_node(), "-e", script]))["address"] == "0.0.0.0"


def test_a_node_without_the_wrapped_internal_refuses_to_run(tmp_path: Path) -> None:
    """Where ``net.Server.prototype._listen2`` is missing, the preload exits non-zero before
    the program runs, and says why."""
    remove = tmp_path / "remove-listen2.cjs"
    remove.write_text("delete require('node:net').Server.prototype._listen2;\n")
    preload = os.fspath(peers.LOOPBACK_PRELOAD)
    result = _run(
        [_node(), "--require", os.fspath(remove), "--require", preload, "-e", "console.log('ran')"]
    )
    assert result.returncode != 0
    assert "ran" not in result.stdout
    assert "_listen2 is missing" in result.stderr

"""Custodia's checkpoints and proofs, verified by the ecosystem's reference Go libraries (CT10).

``tests/harness/tlog`` is a small Go program on golang.org/x/mod/sumdb/note,
github.com/transparency-dev/formats/log and github.com/transparency-dev/merkle (proof, rfc6962):
a proof only our own code accepts does not count. ``.ci/run`` builds it before the tests; here a
session fixture builds it when ``go`` exists. Without it the test is skipped — and fails under
``CUSTODIA_REQUIRE_SERVERS=1`` (CI).
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.audit import AuditService
from backends.audit.proofs import InclusionProof, hashes_text
from backends.config import Config
from tests.harness.servers import unavailable

HARNESS = Path(__file__).resolve().parents[2] / "harness" / "tlog"
BINARY = HARNESS / "bin" / "tlogcheck"
BUILD_TIMEOUT = 300  # seconds: the first build downloads three modules through the proxy


def _stale() -> bool:
    if not BINARY.exists():
        return True
    built = BINARY.stat().st_mtime
    return (
        any(p.stat().st_mtime > built for p in HARNESS.glob("*.go"))
        or (HARNESS / "go.mod").stat().st_mtime > built
    )


@pytest.fixture(scope="session")
def tlogcheck() -> Path:
    """The harness binary, built here when ``go`` exists and it is missing or stale."""
    go = shutil.which("go")
    if _stale() and go is not None:
        env = {**os.environ, "GOFLAGS": "-mod=mod"}
        try:
            subprocess.run(
                [go, "build", "-o", str(BINARY), "."],
                cwd=HARNESS,
                env=env,
                check=True,
                capture_output=True,
                timeout=BUILD_TIMEOUT,
            )
        except (subprocess.SubprocessError, OSError) as err:
            detail = getattr(err, "stderr", b"") or b""
            unavailable(f"cannot build {HARNESS}: {err} {detail.decode(errors='replace')[-500:]}")
    if not BINARY.exists():
        unavailable(f"no Go toolchain to build {HARNESS} (tests/harness/tlog/bin/tlogcheck)")
    return BINARY


def _check(binary: Path, *args: str) -> tuple[int, str]:
    done = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, timeout=60, check=False
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def service(tmp_path: Path) -> Iterator[AuditService]:
    service = AuditService.open(Config(home=tmp_path / "home"), checkpoint_every=0)
    yield service
    service.close()


def test_the_reference_libraries_accept_our_checkpoints_and_proofs(
    tlogcheck: Path, service: AuditService, tmp_path: Path
) -> None:
    for n in range(13):
        service.append(
            "tutor.turn", "ana" if n % 3 else None, personal={"q": "¿sí?"} if n % 3 else None, n=n
        )
    old = service.checkpoint()  # 13 records
    for n in range(20):
        service.append("tutor.turn", None, n=100 + n)
    new = service.checkpoint()  # 33 records
    key = service.verifier_key()
    (tmp_path / "old.note").write_text(old.note)
    (tmp_path / "new.note").write_text(new.note)
    code, out = _check(tlogcheck, "-key", key, "-checkpoint", str(tmp_path / "new.note"))
    assert code == 0 and "size 33" in out, out
    for seq in (1, 7, 13, 32, 33):
        proof = tmp_path / f"{seq}.tlog-proof"
        proof.write_text(service.prove(seq, new).text())
        code, out = _check(tlogcheck, "-key", key, "-proof", str(proof))
        assert code == 0 and f"leaf {seq - 1}" in out, out
    proof = tmp_path / "c.proof"
    proof.write_text(hashes_text(service.prove_consistency(old, new)))
    args = ["-key", key, "-from", str(tmp_path / "old.note"), "-to", str(tmp_path / "new.note")]
    code, out = _check(tlogcheck, "-consistency", str(proof), *args)
    assert code == 0 and "13 -> 33" in out, out


def test_the_reference_libraries_refuse_what_we_refuse(
    tlogcheck: Path, service: AuditService, tmp_path: Path
) -> None:
    for n in range(9):
        service.append("tutor.turn", None, n=n)
    checkpoint = service.checkpoint()
    key = service.verifier_key()
    good = service.prove(4, checkpoint)
    flipped = [bytearray(h) for h in good.path]
    flipped[1][5] ^= 2
    mutated = {
        "flipped bit": InclusionProof(
            good.index, [bytes(h) for h in flipped], good.checkpoint, good.entry
        ),
        "wrong index": InclusionProof(good.index + 1, good.path, good.checkpoint, good.entry),
        "truncated path": InclusionProof(good.index, good.path[:-1], good.checkpoint, good.entry),
        "other entry": InclusionProof(good.index, good.path, good.checkpoint, b"{}"),
        "wrong size": InclusionProof(
            good.index, good.path, good.checkpoint.replace("\n9\n", "\n10\n", 1), good.entry
        ),
    }
    for what, proof in mutated.items():
        path = tmp_path / "bad.tlog-proof"
        path.write_text(proof.text())
        code, out = _check(tlogcheck, "-key", key, "-proof", str(path))
        assert code == 1, f"{what}: {out}"
    other = AuditService.open(Config(home=tmp_path / "other"), checkpoint_every=0)
    try:
        wrong_key = other.verifier_key()
    finally:
        other.close()
    path = tmp_path / "good.tlog-proof"
    path.write_text(good.text())
    assert _check(tlogcheck, "-key", wrong_key, "-proof", str(path))[0] == 1
    assert _check(tlogcheck, "-key", key, "-proof", str(path))[0] == 0
    assert base64.b64decode(good.text().split("\n")[1][len("extra ") :]) == good.entry

"""Frozen SQLite files: written whole or not at all, with a new file's permissions;
what a killed writer left is removed by the next write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from middleware.support.frozen_sqlite import DamagedFile, FrozenFile, written
from middleware.support.temp_files import temporary_beside


def test_a_failed_write_leaves_nothing_and_the_old_file_stays(tmp_path: Path) -> None:
    target = tmp_path / "t.sqlite"
    with written(target) as db:
        db.execute("CREATE TABLE t(n INTEGER)")
    with pytest.raises(RuntimeError), written(target) as db:
        db.execute("CREATE TABLE u(n INTEGER)")
        raise RuntimeError("interrupted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.sqlite"]
    assert FrozenFile(target).rows("SELECT count(*) FROM t") == [(0,)]


def test_a_killed_writers_leftover_is_removed_by_the_next_write(tmp_path: Path) -> None:
    dead = 2**22 + 12345  # above any pid this machine hands out
    leftover = tmp_path / f".frozen-{dead}-abcd"
    leftover.write_bytes(b"half a file")
    live = tmp_path / f".frozen-{os.getpid()}-efgh"  # another write of a live process
    live.write_bytes(b"in progress")
    with written(tmp_path / "t.sqlite") as db:
        db.execute("CREATE TABLE t(n INTEGER)")
    assert not leftover.exists() and live.exists()


def test_a_file_that_is_not_a_database_is_reported_damaged(tmp_path: Path) -> None:
    target = tmp_path / "t.sqlite"
    target.write_bytes(b"not a database" * 200)
    with pytest.raises(DamagedFile, match=r"t\.sqlite is damaged"):
        FrozenFile(target).rows("SELECT 1 FROM t")


def test_temporary_files_follow_the_umask_of_the_moment(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        handle, name = temporary_beside(tmp_path / "x", prefix=".x-")
        os.close(handle)
    finally:
        os.umask(old)
    assert Path(name).stat().st_mode & 0o777 == 0o600

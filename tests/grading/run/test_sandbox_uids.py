"""A root grader's children run as users of their own: one per slot, from a documented range,
never an account's or a running process's uid, never shared with another grading run."""

from __future__ import annotations

import os

import pytest

from hookviz.grading.run import sandbox
from hookviz.grading.run.sandbox import (
    BLOCK_SIZE,
    UID_RANGE,
    Sandbox,
    SandboxError,
    claim_uid_block,
    uids_in_use,
)


def test_a_block_avoids_every_uid_in_use(tmp_path):
    blocks = len(UID_RANGE) // BLOCK_SIZE
    preferred = UID_RANGE.start + (os.getpid() % blocks) * BLOCK_SIZE
    start, handle = claim_uid_block(
        {preferred + 17}, locks=tmp_path
    )  # one uid taken in the first choice
    try:
        assert start != preferred and start in UID_RANGE and start + BLOCK_SIZE - 1 in UID_RANGE
    finally:
        handle.close()


def test_two_runs_never_hold_the_same_block(tmp_path):
    first, held = claim_uid_block(set(), locks=tmp_path)
    second, other = claim_uid_block(set(), locks=tmp_path)
    try:
        assert first != second and abs(first - second) >= BLOCK_SIZE
    finally:
        held.close()
        other.close()
    again, handle = claim_uid_block(set(), locks=tmp_path)  # released with its lock file
    handle.close()
    assert again == first


def test_no_free_block_is_a_clear_error(tmp_path):
    with pytest.raises(SandboxError, match="no free block of 1024 uids"):
        claim_uid_block(set(UID_RANGE), locks=tmp_path)


@pytest.mark.serial  # a sandboxed test running beside it holds a uid of the range
def test_the_range_is_clear_of_this_machines_accounts_and_processes():
    used = uids_in_use()
    assert 0 in used and os.getuid() in used  # root's account, this process
    assert not used & set(UID_RANGE)


def test_every_slot_of_a_root_run_gets_its_own_uid(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "UID_LOCKS", tmp_path)
    monkeypatch.setattr(Sandbox, "as_root", property(lambda self: True))
    box = Sandbox("bwrap", bwrap="/usr/bin/bwrap")
    users = [box.user_for(slot) for slot in range(BLOCK_SIZE)]
    uids = [uid for uid, gid in users]
    assert len(set(uids)) == BLOCK_SIZE and all(uid in UID_RANGE for uid in uids)
    assert all(uid == gid for uid, gid in users)
    with pytest.raises(SandboxError, match="at most 1024 slots"):
        box.user_for(BLOCK_SIZE)
    assert Sandbox("none").user_for(0) is None  # without bwrap, children keep the grader's user
    user = Sandbox("user").user_for(0)  # an exported autograder's: no bwrap, a user all the same
    assert user is not None and user[0] in UID_RANGE and user[0] not in uids

"""Run the nasfs CLI as another account: ``python as_account.py UID GID ARGS...``.

This interpreter lives in a folder only root may enter, so the process starts
as root, imports what the CLI needs, then takes the account's uid and groups
before it opens anything of the tree."""

import argparse  # noqa: F401  (imported before the uid changes: its file is unreadable after)
import hashlib  # noqa: F401
import json  # noqa: F401
import os
import pwd
import sqlite3  # noqa: F401
import sys
import tomllib  # noqa: F401  (the node registry's, imported late by the CLI)

import nasfs.cli
import nasfs.service  # noqa: F401
import nasfs.snapshot_access  # noqa: F401
import nasfs.evidence.nodes  # noqa: F401

uid, gid = int(sys.argv[1]), int(sys.argv[2])
os.setgroups(os.getgrouplist(pwd.getpwuid(uid).pw_name, gid))
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
sys.argv = ["nasfs", *sys.argv[3:]]
nasfs.cli.run()

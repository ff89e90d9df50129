"""The work tree as git's index and status see it: which entries git serves
(ignore rules, tracked files), the files that decide it, and every path
status reports. Folder maps and ``nasfs index`` find a tree's files through
these, so they agree with git on what is ignored."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from .served import ServedTree


class ServedEntries:
    """Which entries of the work tree git serves, judged against the ignore
    rules and the index as they were when this was made: a walk makes one and
    asks it folder by folder, so the index is read once per walk."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo
        self._index = repo.index
        self._index.read(False)  # reloaded only when the index file changed

    def of_folder(self, rel: str, files: list[str], dirs: list[str]) -> tuple[frozenset[str], frozenset[str]]:
        """(files, folders) among the named entries of the folder ``rel``
        (tree-relative, ``""`` for the root) that git serves: a file that is
        tracked (even when an ignore rule matches it) or not ignored, a folder
        not ignored."""
        repo, index = self._repo, self._index
        prefix = rel + "/" if rel else ""
        return (frozenset(n for n in files if prefix + n in index or not repo.path_is_ignored(prefix + n)),
                frozenset(n for n in dirs if not repo.path_is_ignored(prefix + n + "/")))


class WorkStatus(ServedTree):
    """What git's index, ignore rules and status say of the work tree."""

    def rule_files(self) -> list[Path]:
        """The files outside the work tree that decide which of its files git
        serves: the index (a tracked file is served even when ignored), the
        repository's ``info/exclude`` and the user's ``core.excludesFile``
        (when set). Their stamps tell a caller when its decisions still hold;
        the ``.gitignore`` files inside the tree it stamps itself."""
        git_dir = Path(self.repo.path)
        files = [git_dir / "index", git_dir / "info" / "exclude"]
        try:
            files.append(Path(os.path.expanduser(self.repo.config["core.excludesFile"])))
        except (KeyError, ValueError):
            pass
        return files

    def served_entries(self) -> ServedEntries:
        """The ignore rules and index as they are now, for a walk of the work
        tree to ask which entries of each folder git serves."""
        return ServedEntries(self.repo)

    def status_paths(self) -> dict[str, int]:
        """Every path ``git status`` reports, untracked files listed one by one,
        with its status flags: the cheapest full account of what differs from
        the index (libgit2 compares each tracked file's stat with it in C)."""
        return self.repo.status(untracked_files="all")

    def work_paths(self) -> set[str]:
        """Every path git tracks or would add: the index's entries and the
        untracked files no rule ignores, whether or not each is on disk now
        (a tracked file may have been deleted)."""
        names = {entry.path for entry in self.repo.index}
        for path, flags in self.status_paths().items():
            if flags & pygit2.GIT_STATUS_WT_NEW and not flags & pygit2.GIT_STATUS_IGNORED:
                names.add(path)
        return names

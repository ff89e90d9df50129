"""Re-export of a nasfs mount: real Samba (smbd + smbclient) and real NFSv4
(nfs-ganesha + libnfs's nfs-cat/nfs-ls), both on 127.0.0.1 at high ports.

Every server runs from a folder under tmp_path with its own configuration,
state and logs, is started by the fixture that yields it and always stopped by
it (with any process it left behind), and reads the mount as the unprivileged
account ``nobody``: Samba as its forced user, which works only because that
mount is made with ``--allow-other``; ganesha with every client squashed to it,
over a mount made by root without ``--allow-other`` (an NFS server changes only
the filesystem uid, which FUSE's allow_other check does not look at).
The packages come from scripts/setup-reexport.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from nasfs.fuse.mount import mount_at, mounts, probe

from .mounts import Mount
from .processes import end

ROOT = Path(__file__).resolve().parent.parent
SAMBA_EXPORT = ROOT / "scripts" / "samba-export"
ACME = "notes/customer-acme.md"
REAL = ["README.txt", ACME, "notes/meeting-2026-11-12.md", "code/billing.py", "code/client.ts",
        "config/deploy.yaml", "config/agent.json", "data/shipments.csv"]
VIEWS = [f"{ACME}@outline", f"{ACME}@L11-L13", f"{ACME}@section=Renewal", f"{ACME}@200",
         f"{ACME}@outline@80", f"{ACME}@outline.json", f"{ACME}@since=v1", "code/billing.py@outline",
         "code/billing.py@section=Invoice.add", "config/deploy.yaml@outline", "data/shipments.csv@outline",
         "README.txt@50", ".nas/HELP", ".at/v1/notes/customer-acme.md", ".at/v1/notes/customer-acme.md@outline"]
FOLDERS = ["", "notes", "code", "config", "data"]
READER = "nobody"  # the unprivileged account both servers read the mount as
READER_PASSWORD = "nasfs-test-Pw1"
TIMEOUT = 20


def need(tool: str) -> str:
    path = shutil.which(tool) or next((p for p in (f"/usr/sbin/{tool}", f"/usr/bin/{tool}") if os.path.exists(p)), None)
    if path is None:
        pytest.fail(f"{tool} is missing: run scripts/setup-reexport (as root) to install the re-export packages")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def processes_with(marker: str) -> list[int]:
    """Our servers' processes: those whose command line names our own config
    (a unique path under tmp_path), never anybody else's."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def stop_server(proc: subprocess.Popen, marker: str) -> None:
    """Terminate the server we started, then any process it left that names our config."""
    end(proc, grace=15)
    deadline = time.monotonic() + 5
    while (left := [pid for pid in processes_with(marker) if pid != os.getpid()]) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def change_acme(mnt: Path) -> None:
    """Change the file through the mount: one more section, so its views grow."""
    path = mnt / ACME
    path.write_bytes(path.read_bytes() + b"\n## Escalation path\n\nCall the CFO first, then legal.\n")


SHARED_PREFIX = "/tmp/nasfs-reexport-"


@contextmanager
def nasfs_mount(home: Path, *extra: str) -> Iterator[Mount]:
    """The demo tree mounted at a mount point the unprivileged reader can
    reach (pytest's tmp folders are root's alone, 0700)."""
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        pytest.fail("re-export tests need root and /dev/fuse (run scripts/test as root)")
    for old in mounts():  # a mount of ours that a killed run left, whose daemon is gone
        if old.mountpoint.startswith(SHARED_PREFIX) and probe(old.mountpoint).state == "stale":
            subprocess.run(["fusermount3", "-u", "-z", old.mountpoint], check=False, capture_output=True)
    base = Path(tempfile.mkdtemp(prefix=SHARED_PREFIX))
    base.chmod(0o755)
    m = None
    try:
        m = Mount(home, base / "mnt", *extra)
        yield m
    finally:
        rc = m.stop() if m is not None else 0
        log = m.log.read_text()[-2000:] if m is not None else ""
        if mount_at(str(base / "mnt")) is None:
            shutil.rmtree(base, ignore_errors=True)
        assert rc == 0, f"daemon exit {rc}: {log}"


@pytest.fixture
def shared(home: Path) -> Iterator[Mount]:
    """Mounted with --allow-other: Samba reads it as the forced user."""
    with nasfs_mount(home, "--allow-other") as m:
        yield m


@pytest.fixture
def shared_root_only(home: Path) -> Iterator[Mount]:
    """Mounted by root without --allow-other: enough for an NFS server, which
    switches only the filesystem uid (FUSE's allow_other check looks at the
    real and effective uids), and keeps other local users out."""
    with nasfs_mount(home) as m:
        yield m


# -- Samba ----------------------------------------------------------------------


@dataclass
class Smb:
    port: int
    share: str
    client_conf: Path
    scratch: Path
    reader: str = READER

    def client(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [need("smbclient"), f"//127.0.0.1/{self.share}", "-p", str(self.port), "-s", str(self.client_conf),
             "-U", f"{self.reader}%{READER_PASSWORD}", "-c", command],
            check=False, capture_output=True, text=True, timeout=TIMEOUT)

    def run(self, command: str) -> str:
        done = self.client(command)
        assert done.returncode == 0, f"smbclient -c {command!r}: {done.stdout}{done.stderr}"
        return done.stdout

    def refused(self, path: str) -> str:
        """The NT status a get of ``path`` fails with. A failed tree connect is
        no answer about ``path`` (a freshly started smbd once answered its first
        connect with NT_STATUS_NO_MEMORY under load): it is tried again."""
        for _ in range(3):
            done = self.client(f'get "{path}" "{self.scratch}/refused"')
            if "tree connect failed" not in done.stdout + done.stderr:
                break
            time.sleep(1)
        assert done.returncode != 0, f"{path} was served"
        return done.stdout + done.stderr

    def get(self, path: str) -> bytes:
        local = self.scratch / "got"
        local.unlink(missing_ok=True)
        self.run(f'get "{path}" "{local}"')
        return local.read_bytes()

    def ls(self, pattern: str) -> dict[str, int]:
        """name -> size, as an SMB directory search reports them."""
        rows = {}
        for line in self.run(f'ls "{pattern}"').splitlines():
            m = re.match(r"^  (.*?)\s+([A-Z]*)\s+(\d+)\s+\w{3} \w{3}\s+\d+ [\d:]+ \d{4}$", line)
            if m and m.group(1) not in (".", ".."):
                rows[m.group(1)] = int(m.group(3))
        return rows


@contextmanager
def smb_server(mount: Mount, tmp_path: Path, *extra: str, reader: str = READER) -> Iterator[Smb]:
    """smbd on 127.0.0.1 sharing the mount as [home] (read-only, forced user
    ``reader``, nobody unless said), started through scripts/samba-export
    --serve with a private passdb."""
    need("smbd")
    state = tmp_path / "samba"
    port = free_port()
    out = tmp_path / "smbd.out"
    env = dict(os.environ, SMB_PASSWORD=READER_PASSWORD)
    with out.open("wb") as log:
        proc = subprocess.Popen(
            [str(SAMBA_EXPORT), "--serve", f"127.0.0.1:{port}", "--state-dir", str(state), "--share", "home",
             "--force-user", reader, "--add-user", reader, *extra, str(mount.mountpoint)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)  # smbd makes its own session
    try:
        deadline = time.monotonic() + TIMEOUT
        while not port_open(port):
            assert proc.poll() is None, f"smbd exited {proc.returncode}: {out.read_text()}"
            assert time.monotonic() < deadline, f"smbd did not listen: {out.read_text()}"
            time.sleep(0.1)
        client_conf = tmp_path / "smbclient.conf"
        client_conf.write_text("[global]\n    client min protocol = SMB2_10\n")
        yield Smb(port, "home", client_conf, tmp_path, reader)
        assert proc.poll() is None, f"smbd died: {out.read_text()[-3000:]}"
    finally:
        stop_server(proc, str(state / "smb.conf"))


@pytest.fixture
def smb(shared: Mount, tmp_path: Path) -> Iterator[Smb]:
    with smb_server(shared, tmp_path) as server:
        yield server


def test_samba_export_writes_a_config_testparm_accepts(shared: Mount, tmp_path: Path) -> None:
    conf = tmp_path / "smb.conf"
    subprocess.run([str(SAMBA_EXPORT), "--force-user", READER, "--share", "agents", "--output", str(conf),
                    str(shared.mountpoint)], check=True, capture_output=True, timeout=TIMEOUT)
    done = subprocess.run(["testparm", "-s", str(conf)], check=False, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    share = done.stdout.split("[agents]", 1)[1]
    for line in ("force user = nobody", "store dos attributes = No", "ea support = No", "oplocks = No",
                 f"path = {shared.mountpoint}"):
        assert line in share, line
    assert "read only = No" not in share and "guest ok = Yes" not in share
    assert "server min protocol = SMB2" in done.stdout and "smb2 leases = No" in done.stdout
    # root as the forced user, or a path that is not a nasfs mount, is refused
    refused = subprocess.run([str(SAMBA_EXPORT), "--force-user", "root", str(shared.mountpoint)], check=False, capture_output=True, text=True)
    assert refused.returncode == 2 and "root" in refused.stderr
    not_mounted = subprocess.run([str(SAMBA_EXPORT), "--serve", "127.0.0.1:1", "--state-dir", str(tmp_path / "x"),
                                  "--force-user", READER, str(tmp_path)], check=False, capture_output=True, text=True)
    assert not_mounted.returncode == 2 and "not mounted" in not_mounted.stderr


def test_smb_serves_real_files_and_views_byte_for_byte(smb: Smb, shared: Mount, home: Path) -> None:
    mnt = shared.mountpoint
    for rel in REAL:
        assert smb.get(rel) == (home / rel).read_bytes(), rel
    for spec in VIEWS:
        want = (mnt / spec).read_bytes()
        assert smb.get(spec) == want, spec
        name = spec.rpartition("/")[2]
        assert smb.ls(spec) == {name: len(want)}, spec  # a direct search on the name: its true size
    assert "NT_STATUS_OBJECT_NAME_NOT_FOUND" in smb.refused(f"{ACME}@section=NoSuchSection")


def test_smb_listings_show_the_real_tree_only(smb: Smb, shared: Mount, home: Path) -> None:
    for folder in FOLDERS:
        prefix = f"{folder}/" if folder else ""
        listed = smb.ls(f"{prefix}*")
        assert set(listed) == set(os.listdir(home / folder)), folder
        assert not any("@" in name for name in listed)
        for name, size in listed.items():
            if (home / folder / name).is_file():
                assert size == (home / folder / name).stat().st_size, name
    assert ".nas" not in smb.ls("*") and ".at" not in smb.ls("*")


def test_smb_view_follows_a_changed_file(smb: Smb, shared: Mount) -> None:
    mnt = shared.mountpoint
    before = smb.get(f"{ACME}@outline")
    change_acme(mnt)
    after = smb.get(f"{ACME}@outline")
    assert after != before and b"## Escalation path" in after
    assert after == (mnt / f"{ACME}@outline").read_bytes()
    assert smb.ls(f"{ACME}@outline") == {"customer-acme.md@outline": len(after)}
    assert smb.get(ACME) == (mnt / ACME).read_bytes()


def test_smb_views_are_as_private_as_their_file(smb: Smb, shared: Mount) -> None:
    """A view reads like its file: when the forced user may not read the file,
    it may not read its outline or lines either."""
    secret = "config/agent.json"
    os.chmod(shared.mountpoint / secret, 0o600)  # root's alone; the share reads as nobody
    for name in (secret, f"{secret}@outline", f"{secret}@L1-L3", f"{secret}@section=model"):
        assert "NT_STATUS_ACCESS_DENIED" in smb.refused(name), name
    os.chmod(shared.mountpoint / secret, 0o644)
    assert smb.get(f"{secret}@outline") == (shared.mountpoint / f"{secret}@outline").read_bytes()


def test_smb_no_history_refuses_at_and_nas_but_serves_views(shared: Mount, tmp_path: Path) -> None:
    with smb_server(shared, tmp_path, "--no-history") as smb:
        for name in (".nas/HELP", ".at/v1/notes/customer-acme.md", ".nas/search/Renewal"):
            assert re.search("NT_STATUS_OBJECT_(NAME|PATH)_NOT_FOUND", smb.refused(name)), name
        assert smb.get(f"{ACME}@outline") == (shared.mountpoint / f"{ACME}@outline").read_bytes()
        assert smb.get(ACME) == (shared.mountpoint / ACME).read_bytes()


# -- NFS (nfs-ganesha, userspace, NFSv4 only: no rpcbind, no kernel nfsd) ----------------


def ganesha_conf(state: Path, port: int, mountpoint: Path, anon_uid: int, anon_gid: int) -> str:
    plugins = sorted(glob.glob("/usr/lib/*/ganesha/libfsalvfs.so") + glob.glob("/usr/lib*/ganesha/libfsalvfs.so"))
    if not plugins:
        pytest.fail("nfs-ganesha's VFS FSAL is missing: run scripts/setup-reexport")
    return f"""\
NFS_CORE_PARAM {{
    Protocols = 4;
    NFS_Port = {port};
    Bind_addr = 127.0.0.1;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
    Plugins_Dir = {os.path.dirname(plugins[0])};
}}
NFSV4 {{
    Graceless = true;
    RecoveryBackend = fs;
    RecoveryRoot = {state}/recovery;
    Only_Numeric_Owners = true;
}}
NFS_KRB5 {{
    Active_krb5 = false;
}}
MDCACHE {{
    Dir_Chunk = 0;
}}
EXPORT_DEFAULTS {{
    Protocols = 4;
    Transports = TCP;
    Attr_Expiration_Time = 0;
}}
EXPORT {{
    Export_Id = 1;
    Path = {mountpoint};
    Pseudo = /home;
    Protocols = 4;
    Transports = TCP;
    SecType = sys;
    Access_Type = RO;
    Squash = all_squash;
    Anonymous_uid = {anon_uid};
    Anonymous_gid = {anon_gid};
    Attr_Expiration_Time = 0;
    CLIENT {{
        Clients = 127.0.0.1;
        Protocols = 4;
        Access_Type = RO;
    }}
    FSAL {{
        Name = VFS;
    }}
}}
LOG {{
    Default_Log_Level = EVENT;
}}
"""


@dataclass
class Nfs:
    port: int

    def url(self, path: str) -> str:
        return f"nfs://127.0.0.1/home/{path}?version=4&nfsport={self.port}"

    def cat(self, path: str) -> bytes:
        done = subprocess.run([need("nfs-cat"), self.url(path)], check=False, capture_output=True, timeout=TIMEOUT)
        assert done.returncode == 0, f"nfs-cat {path}: {done.stderr.decode(errors='replace')}"
        return done.stdout

    def ls(self, folder: str) -> dict[str, int]:
        done = subprocess.run([need("nfs-ls"), self.url(folder)], check=False, capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 0, f"nfs-ls {folder}: {done.stderr}"
        rows = {}
        for line in done.stdout.splitlines():
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5] not in (".", ".."):
                rows[fields[5]] = int(fields[4])
        return rows


@pytest.fixture
def nfs(shared_root_only: Mount, tmp_path: Path) -> Iterator[Nfs]:
    """nfs-ganesha exporting the mount read-only over NFSv4 at 127.0.0.1, every
    client squashed to the unprivileged reader."""
    ganesha = need("ganesha.nfsd")
    state = tmp_path / "ganesha"
    (state / "recovery").mkdir(parents=True)
    port = free_port()
    conf = state / "ganesha.conf"
    pw = __import__("pwd").getpwnam(READER)
    conf.write_text(ganesha_conf(state, port, shared_root_only.mountpoint, pw.pw_uid, pw.pw_gid))
    log = state / "ganesha.log"
    with (state / "ganesha.out").open("wb") as out:
        proc = subprocess.Popen([ganesha, "-F", "-f", str(conf), "-L", str(log), "-p", str(state / "ganesha.pid"), "-N", "NIV_EVENT"],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=state, start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (port_open(port) and log.exists() and "NFS SERVER INITIALIZED" in log.read_text(errors="replace")):
            assert proc.poll() is None, f"ganesha exited {proc.returncode}: {log.read_text(errors='replace') if log.exists() else ''}"
            assert time.monotonic() < deadline, f"ganesha did not start: {log.read_text(errors='replace') if log.exists() else ''}"
            time.sleep(0.1)
        yield Nfs(port)
        assert proc.poll() is None, f"ganesha died: {log.read_text(errors='replace')[-3000:]}"
    finally:
        stop_server(proc, str(conf))


def drop_caches() -> None:
    """Make the kernel forget the mount's dentries and inodes, so the server
    reaches them again by handle or by a fresh lookup."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as fh:
        fh.write("3")


def test_nfs_serves_real_files_and_views_byte_for_byte(nfs: Nfs, shared_root_only: Mount, home: Path) -> None:
    mnt = shared_root_only.mountpoint
    for rounds in range(2):
        for rel in REAL:
            assert nfs.cat(rel) == (home / rel).read_bytes(), rel
        for spec in VIEWS:
            # nfs-cat reads exactly the size NFS GETATTR reports: equal bytes mean the size is right too
            assert nfs.cat(spec) == (mnt / spec).read_bytes(), (rounds, spec)
        drop_caches()


def test_nfs_listings_show_the_real_tree_only(nfs: Nfs, home: Path) -> None:
    for folder in FOLDERS:
        listed = nfs.ls(folder)
        assert set(listed) == set(os.listdir(home / folder)), folder
        for name, size in listed.items():
            if (home / folder / name).is_file():
                assert size == (home / folder / name).stat().st_size, name


def test_nfs_view_follows_a_changed_file(nfs: Nfs, shared_root_only: Mount) -> None:
    mnt = shared_root_only.mountpoint
    before = nfs.cat(f"{ACME}@outline")
    json_before = nfs.cat(f"{ACME}@outline.json")
    change_acme(mnt)
    after = nfs.cat(f"{ACME}@outline")
    assert after != before and b"## Escalation path" in after and len(after) > len(before)
    assert after == (mnt / f"{ACME}@outline").read_bytes()
    assert nfs.cat(f"{ACME}@outline.json") == (mnt / f"{ACME}@outline.json").read_bytes() != json_before
    assert nfs.cat(ACME) == (mnt / ACME).read_bytes()
    drop_caches()
    assert nfs.cat(f"{ACME}@outline") == after


def test_nfs_views_are_as_private_as_their_file(nfs: Nfs, shared_root_only: Mount) -> None:
    secret = "config/agent.json"
    os.chmod(shared_root_only.mountpoint / secret, 0o600)  # root's alone; every NFS client is squashed to nobody
    for name in (secret, f"{secret}@outline", f"{secret}@L1-L3"):
        done = subprocess.run([need("nfs-cat"), nfs.url(name)], check=False, capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode != 0 and "NFS4ERR_ACCESS" in done.stderr, (name, done.stderr)
    os.chmod(shared_root_only.mountpoint / secret, 0o644)
    assert nfs.cat(f"{secret}@outline") == (shared_root_only.mountpoint / f"{secret}@outline").read_bytes()


# -- file handles, as a kernel nfsd uses them ----------------------------------------


class _FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int), ("f_handle", ctypes.c_ubyte * 128)]


def test_real_files_reopen_by_handle_after_the_kernel_forgets_them(shared: Mount, home: Path) -> None:
    """name_to_handle_at / open_by_handle_at, what kernel nfsd (and ganesha's
    VFS FSAL) do: the handle of a real file or folder keeps working after
    drop_caches, because the mount answers lookups of '.' by inode."""
    libc = ctypes.CDLL(None, use_errno=True)
    mnt = shared.mountpoint
    root_fd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for rel, flags in [(ACME, os.O_RDONLY), ("code/billing.py", os.O_RDONLY), ("notes", os.O_RDONLY | os.O_DIRECTORY),
                           (f"{ACME}@outline", os.O_RDONLY)]:
            handle, mount_id = _FileHandle(handle_bytes=128), ctypes.c_int()
            assert libc.name_to_handle_at(-100, os.fsencode(mnt / rel), ctypes.byref(handle), ctypes.byref(mount_id), 0) == 0, \
                os.strerror(ctypes.get_errno())
            drop_caches()
            fd = libc.open_by_handle_at(root_fd, ctypes.byref(handle), flags)
            assert fd >= 0, f"{rel}: {os.strerror(ctypes.get_errno())}"
            try:
                if flags & os.O_DIRECTORY:
                    assert sorted(os.listdir(fd)) == sorted(os.listdir(home / rel))
                else:
                    assert os.read(fd, 1 << 20) == (mnt / rel).read_bytes()
            finally:
                os.close(fd)
    finally:
        os.close(root_fd)

"""Network partitions for cluster tests: one network namespace per host, joined by veth pairs to a bridge.

A ``NetworkLab`` makes, for one test run, a bridge ``cnpb<id>`` in the root namespace with the address
``10.200.S.1/24`` (``S`` picked so that no route of this machine covers the subnet), and for each host a network
namespace ``canopy-<pid>-<id>-<host>`` whose ``eth0`` (``10.200.S.<10+n>``) is the peer of a veth ``cnpv<id><n>`` on
the bridge. A process runs in its host's namespace through ``ip netns exec``, so every NATS server and Canopy node
can keep the standard ports and has an address of its own; the test's clients, in the root namespace, reach every
host through the bridge. Nothing is routed beyond the subnet: it exists only on this machine.

A **partition** drops, silently, every IP packet between a host and a set of peers, in both directions, on the
host's two veth ends (an HTB qdisc whose u32 filters send those packets to a class with a zero-length FIFO): TCP
connections stay open and nothing is answered, as when a link or a switch fails. Only ``ip`` and ``tc`` are needed,
with no firewall. ``heal`` removes every drop; ``close`` removes the namespaces, the veths and the bridge, and a
new lab first removes those left by a process that is gone (a run killed before it could clean up).

``unavailable_reason()`` tells why partitions cannot be made here (not root, no ``ip`` or ``tc``, a kernel without
network namespaces, HTB or u32), so tests skip with that reason.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import random
import shutil
import subprocess
from dataclasses import dataclass

COMMAND_TIMEOUT = 10.0
NAMESPACE_PREFIX = "canopy-"


class NetworkLabError(RuntimeError):
    """An ``ip`` or ``tc`` command failed."""


def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs one ``ip``/``tc`` command (bounded in time); raises ``NetworkLabError`` when it fails and ``check``."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise NetworkLabError(f"{' '.join(argv)}: no answer within {COMMAND_TIMEOUT:g} s") from None
    if check and done.returncode != 0:
        raise NetworkLabError(f"{' '.join(argv)}: {done.stderr.strip() or done.returncode}")
    return done


@dataclass(frozen=True)
class Host:
    """One host of the lab: its name, network namespace, address and the root namespace's end of its veth."""

    name: str
    netns: str
    address: str
    port_device: str

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the host's namespace."""
        return ["ip", "netns", "exec", self.netns, *argv]


class NetworkLab:
    """The bridge, namespaces and veth pairs of one run (see the module's docstring); a context manager that
    removes them on exit."""

    def __init__(self):
        remove_leftovers()
        self.id = f"{random.getrandbits(24):06x}"
        self.bridge = f"cnpb{self.id}"
        self.subnet = free_subnet()
        self.hosts: dict[str, Host] = {}
        self.blocked: dict[str, set[str]] = {}  # host name -> peer addresses dropped
        try:
            run("ip", "link", "add", self.bridge, "type", "bridge")
            run("ip", "addr", "add", f"{self.address(1)}/24", "dev", self.bridge)
            run("ip", "link", "set", self.bridge, "up")
        except NetworkLabError:
            self.close()
            raise

    def address(self, number: int) -> str:
        return str(self.subnet.network_address + number)

    @property
    def gateway(self) -> str:
        """The root namespace's address on the bridge (where the test's clients come from)."""
        return self.address(1)

    def add_host(self, name: str) -> Host:
        """A new namespace on the bridge, with loopback and ``eth0`` up."""
        number = len(self.hosts)
        host = Host(name, f"{NAMESPACE_PREFIX}{os.getpid()}-{self.id}-{name}", self.address(10 + number),
                    f"cnpv{self.id}{number:02d}")
        self.hosts[name] = host
        run("ip", "netns", "add", host.netns)
        run("ip", "link", "add", host.port_device, "type", "veth", "peer", "name", "eth0", "netns", host.netns)
        run("ip", "link", "set", host.port_device, "master", self.bridge, "up")
        run("ip", "-n", host.netns, "addr", "add", f"{host.address}/24", "dev", "eth0")
        run("ip", "-n", host.netns, "link", "set", "eth0", "up")
        run("ip", "-n", host.netns, "link", "set", "lo", "up")
        return host

    def partition(self, side: list[Host], others: list[Host]) -> None:
        """Drops every packet between each host of ``side`` and each of ``others`` (added to what is dropped)."""
        for host in side:
            self.blocked.setdefault(host.name, set()).update(other.address for other in others)
            self._install(host)

    def heal(self) -> None:
        """Drops nothing any more."""
        names = list(self.blocked)
        self.blocked.clear()
        for name in names:
            self._install(self.hosts[name])

    @property
    def partitioned(self) -> bool:
        return any(self.blocked.values())

    def _install(self, host: Host) -> None:
        """Puts the host's drops in force on both ends of its veth: the bridge's end drops what comes from a
        blocked peer, the namespace's end what goes to one."""
        peers = sorted(self.blocked.get(host.name, ()))
        for prefix, device, direction in (([], host.port_device, "src"),
                                          (["ip", "netns", "exec", host.netns], "eth0", "dst")):
            run(*prefix, "tc", "qdisc", "del", "dev", device, "root", check=False)
            if not peers:
                continue
            run(*prefix, "tc", "qdisc", "add", "dev", device, "root", "handle", "1:", "htb", "default", "1")
            for number in (1, 2):
                run(*prefix, "tc", "class", "add", "dev", device, "parent", "1:", "classid", f"1:{number}", "htb",
                    "rate", "10gbit", "quantum", "60000")
            run(*prefix, "tc", "qdisc", "add", "dev", device, "parent", "1:2", "pfifo", "limit", "0")
            for peer in peers:
                run(*prefix, "tc", "filter", "add", "dev", device, "parent", "1:", "protocol", "ip", "prio", "1",
                    "u32", "match", "ip", direction, f"{peer}/32", "flowid", "1:2")

    def close(self) -> None:
        """Removes the veths, namespaces and bridge (what is already gone is skipped)."""
        for host in self.hosts.values():
            run("ip", "link", "del", host.port_device, check=False)
            run("ip", "netns", "del", host.netns, check=False)
        run("ip", "link", "del", self.bridge, check=False)
        self.hosts.clear()
        self.blocked.clear()

    def __enter__(self) -> "NetworkLab":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def free_subnet() -> ipaddress.IPv4Network:
    """A /24 of 10.200.0.0/16 that no route or address of this machine covers yet."""
    taken = run("ip", "-4", "route", "show", "table", "all").stdout + run("ip", "-4", "addr").stdout
    for third in random.sample(range(256), 256):
        subnet = ipaddress.IPv4Network(f"10.200.{third}.0/24")
        if f"10.200.{third}." not in taken:
            return subnet
    raise NetworkLabError("every /24 of 10.200.0.0/16 is in use")


def remove_leftovers() -> None:
    """Removes the namespaces, veths and bridges of labs whose process is gone."""
    listed = run("ip", "netns", "list", check=False).stdout.split("\n")
    ids = set()
    for line in listed:
        name = line.split(" ")[0]
        if not name.startswith(NAMESPACE_PREFIX):
            continue
        fields = name[len(NAMESPACE_PREFIX):].split("-")
        if len(fields) < 3 or not fields[0].isdigit() or os.path.exists(f"/proc/{fields[0]}"):
            continue
        ids.add(fields[1])
        run("ip", "netns", "del", name, check=False)
    for lab in ids:
        links = run("ip", "-o", "link", "show", check=False).stdout
        for line in links.split("\n"):
            device = line.split(": ")[1].split("@")[0] if ": " in line else ""
            if device.startswith((f"cnpv{lab}", f"cnpb{lab}")):
                run("ip", "link", "del", device, check=False)


@functools.cache
def unavailable_reason() -> str | None:
    """Why partitions cannot be made on this machine, or ``None`` when they can (tried once, with a lab of two
    hosts and a drop between them)."""
    if os.geteuid() != 0:
        return "network partitions need root (network namespaces, veth pairs and tc)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"network partitions need `{tool}` (Debian: iproute2)"
    try:
        with NetworkLab() as lab:
            first, second = lab.add_host("probe1"), lab.add_host("probe2")
            lab.partition([first], [second])
            lab.heal()
    except (NetworkLabError, OSError) as error:
        return f"network partitions cannot be made here: {error}"
    return None

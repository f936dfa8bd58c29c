"""Switch backends of the control plane: where netec_control's entries land on real hardware.

Both take the same `Entry` objects (table, key and action parameters by the P4 program's
names) that the model backend writes into the pipeline model, plus the task's multicast group
and the registers to clear when a task id is reused.

- `ThriftBackend`: BMv2 (simple_switch) running p4src/v1model/netec.p4, over the thrift
  runtime API that behavioral-model ships (its `bm_runtime` Python package); names and widths
  come from the BMv2 JSON p4c-bm2-ss wrote. Run against BMv2 by
  src/test/python/test_p4_toolchain.py.
- `P4RuntimeBackend`: BMv2 built with P4Runtime (simple_switch_grpc), over P4Runtime (the
  `p4runtime` and `grpcio` packages; p4info and BMv2 JSON from p4c-bm2-ss). Not run here:
  simple_switch_grpc needs p4lang/PI and gRPC, which were not built.
- `BfrtBackend`: a Tofino running p4src/tna/netec.p4, from inside bfshell's bfrt_python (the
  `bfrt` object the shell provides). Not run here (no SDE); the tests check its calls against
  the TNA program's names (test_switch_p4_programs.py).

Every backend also installs the routes (`route_entries`: l3_forward, host address -> port and
MAC) once, when the control plane starts.
"""

import functools
import json
import threading

from netec_p4.control.netec_control import Backend, Entry, Refused, ip_int
from netec_p4.model.pipeline import INVALID_SEQ  # slot_seq of a free slot

# Tables of the egress control; every other table is in ingress.
EGRESS_TABLES = {"replica"}

# Registers cleared when a task id / slot array is reused: per task, per slot-array cell (both
# in ingress), per task and sender (egress). The sums need no clearing: a stripe's first packet
# in a slot overwrites them (the slot's seq says so).
TASK_REGISTERS = ["ack_seq", "max_started_plus1", "slot_starts", "slot_completes",
                  "reader_addr", "reader_port", "synack_bits", "reader_proven"]
SLOT_REGISTERS = ["slot_seq", "slot_bits", "slot_count"]
SLOTS = 64
SENDERS = 16


class Program:
    """What a backend needs to know of a compiled P4 program: the registers a reused task id or
    slot array must find clear, and its route tables."""

    def __init__(self, task_registers, slot_registers, sender_registers,
                 route_tables=("l3_forward",), ack_bound=False, egress_task_registers=()):
        self.route_tables = route_tables  # each holds every host's route
        # on Tofino, ack_seq's cell is a pair: ackSeq (lo) beside its bound, the task's
        # stripes (hi), which setup writes (the v1model twins bound it from the stripes in
        # their tables' action data)
        self.ack_bound = ack_bound
        self.task_registers, self.slot_registers = task_registers, slot_registers
        self.sender_registers = sender_registers
        self.egress_task_registers = list(egress_task_registers)  # per task, in egress


PROGRAMS = {
    # p4src/v1model/netec.p4: multiply, TCP proxy
    "netec": Program(TASK_REGISTERS, SLOT_REGISTERS, ["isn_delta"],
                     ("l3_forward", "l3_to_reader", "l3_agent_to_reader"), ack_bound=True),
    # p4src/v1model/netec_xor.p4: pre-multiplied survivors, datagrams. Its sums need no
    # clearing: a stripe's first packet in a slot overwrites them (the slot's seq says so).
    # EBSN's counters are egress's.
    "netec_xor": Program(["ack_seq", "reader_addr", "reader_port"],
                         ["slot_seq", "slot_bits", "slot_count"], [],
                         ("l3_forward", "l3_to_reader", "l3_agent_to_reader"), ack_bound=True,
                         egress_task_registers=["max_started_plus1", "slot_starts",
                                                "slot_completes"]),
}


def canonical(value, bitwidth):
    """P4Runtime's canonical bytes of an unsigned value: big-endian, no leading zero bytes."""
    if value < 0 or value >> bitwidth:
        raise ValueError("%d does not fit in %d bits" % (value, bitwidth))
    raw = value.to_bytes((bitwidth + 7) // 8, "big")
    return raw.lstrip(b"\0") or b"\0"


def route_entries(hosts, tables=("l3_forward",)):
    """Route entries, one per host in each of TABLES (l3_forward; the datagram program has
    two more, one per call site): HOSTS maps an IPv4 address to (switch port, MAC as an int)."""
    return [Entry(t, {"hdr.ipv4.dst_addr": (ip_int(ip), 32)}, "route",
                  {"port": port, "dmac": mac})
            for t in tables for ip, (port, mac) in sorted(hosts.items())]


class ByShortName:
    """A compiled program's objects by their short name, the last component of their full name:
    the programs keep their tables, registers and counters in controls of their own
    (p4src/v1model/common/, tcp/, xor/), whose instance names the compiler puts in front. A
    short name that several objects share (MultiplyPass's sixteen log_table copies) names none
    of them: looking it up is an error naming them all."""

    def __init__(self):
        self._by_short = {}  # short name -> [(full name, value)]

    def add(self, full_name, value):
        self._by_short.setdefault(short_name(full_name), []).append((full_name, value))

    def __getitem__(self, short):
        found = self._by_short.get(short)
        if not found:
            raise KeyError("nothing named %s in the program" % short)
        if len(found) > 1:
            raise KeyError("%s names %d objects of the program: %s"
                           % (short, len(found), ", ".join(f for f, _ in found)))
        return found[0][1]

    def __contains__(self, short):
        return len(self._by_short.get(short, ())) == 1

    def full_names(self):
        return sorted(f for found in self._by_short.values() for f, _ in found)


def short_name(field):
    """A name's last component: bfrt_python's name of a key field (hdr.ipv4.dst_addr ->
    dst_addr), ByShortName's of a table, action, register or counter."""
    return field.split(".")[-1]


def _serialized(method):
    @functools.wraps(method)
    def call(self, *args):
        with self.lock:
            return method(self, *args)
    return call


class ThriftBackend(Backend):
    """Programs a running BMv2 simple_switch through its thrift runtime API.

    CLIENTS: (standard, simple_pre_lag) thrift clients, connected (bm_runtime's Standard.Client
    and SimplePreLAG.Client over one multiplexed protocol; `connect` makes them). BMV2_JSON:
    the program p4c-bm2-ss compiled, which the switch runs. PORTS: agent host -> switch port.
    """

    def __init__(self, clients, bmv2_json_path, ports, program="netec"):
        from bm_runtime.standard import ttypes as st
        self.st = st
        self.profile = PROGRAMS[program]
        self.std, self.pre = clients
        self.ports = ports
        with open(bmv2_json_path) as f:
            program = json.load(f)
        widths = {}
        types = {t["name"]: t for t in program["header_types"]}
        for h in program["headers"]:
            for name, bits, *_ in types[h["header_type"]]["fields"]:
                widths[(h["name"], name)] = bits
        # tables (with their own actions, by short name), registers and counters, each by its
        # short name (ByShortName)
        actions = {a["id"]: (a["name"], [(d["name"], d["bitwidth"]) for d in a["runtime_data"]])
                   for a in program["actions"]}
        self.tables = ByShortName()  # -> (full name, [(match type, width)], {action: its own})
        for pipe in program["pipelines"]:
            for t in pipe["tables"]:
                keys = [(k["match_type"], widths[tuple(k["target"])]) for k in t["key"]]
                own = {short_name(actions[i][0]): actions[i] for i in t["action_ids"]}
                self.tables.add(t["name"], (t["name"], keys, own))
        self.registers = ByShortName()  # -> full name
        for r in program["register_arrays"]:
            self.registers.add(r["name"], r["name"])
        self.counters = ByShortName()
        for c in program["counter_arrays"]:
            self.counters.add(c["name"], c["name"])
        self.handles = {}  # (table, key values) -> entry handle
        self.groups = {}  # multicast group -> (group handle, [node handles])
        # one request at a time on the connection: the control plane calls from its endpoint's
        # threads and its expiry thread
        self.lock = threading.RLock()

    @staticmethod
    def connect(host, port):
        """The two clients of the switch's thrift server at HOST:PORT."""
        from bm_runtime.simple_pre_lag import SimplePreLAG
        from bm_runtime.standard import Standard
        from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
        from thrift.transport import TSocket, TTransport
        transport = TTransport.TBufferedTransport(TSocket.TSocket(host, port))
        proto = TBinaryProtocol.TBinaryProtocol(transport)
        clients = (Standard.Client(TMultiplexedProtocol.TMultiplexedProtocol(proto, "standard")),
                   SimplePreLAG.Client(
                       TMultiplexedProtocol.TMultiplexedProtocol(proto, "simple_pre_lag")))
        transport.open()
        return clients, transport

    @staticmethod
    def _bytes(value, bits):
        if value < 0 or value >> bits:
            raise ValueError("%d does not fit in %d bits" % (value, bits))
        return value.to_bytes((bits + 7) // 8, "big")

    def _match(self, table, key):
        st = self.st
        name, fields, _ = self.tables[table]
        params = []
        for (kind, bits), value in zip(fields, key.values()):
            if kind == "lpm":
                addr, prefix = value
                params.append(st.BmMatchParam(type=st.BmMatchParamType.LPM,
                                              lpm=st.BmMatchParamLPM(self._bytes(addr, bits),
                                                                     prefix)))
            else:
                params.append(st.BmMatchParam(type=st.BmMatchParamType.EXACT,
                                              exact=st.BmMatchParamExact(self._bytes(value,
                                                                                     bits))))
        return name, params

    @_serialized
    def write(self, e):
        """Installs one Entry."""
        table, match = self._match(e.table, e.key)
        action, params = self.tables[e.table][2][e.action]
        data = [self._bytes(e.params[p], bits) for p, bits in params]
        self.handles[(e.table, tuple(e.key.values()))] = self.std.bm_mt_add_entry(
            0, table, match, action, data, self.st.BmAddEntryOptions())

    @_serialized
    def modify(self, e):
        """Changes an installed entry's action data to E's (same table and key)."""
        name, _ = self._match(e.table, e.key)
        action, params = self.tables[e.table][2][e.action]
        data = [self._bytes(e.params[p], bits) for p, bits in params]
        self.std.bm_mt_modify_entry(0, name, self.handles[(e.table, tuple(e.key.values()))],
                                    action, data)

    @_serialized
    def delete(self, e):
        h = self.handles.pop((e.table, tuple(e.key.values())))
        self.std.bm_mt_delete_entry(0, self.tables[e.table][0], h)

    @_serialized
    def add_routes(self, hosts):
        for e in route_entries(hosts, self.profile.route_tables):
            self.write(e)

    @_serialized
    def register_read(self, name, index):
        return self.std.bm_register_read(0, self.registers[name], index)

    @_serialized
    def counter_read(self, name, index):
        return self.std.bm_counter_read(0, self.counters[name], index).packets

    @_serialized
    def add_task(self, task, array, entries):
        entries, group = entries
        pr = self.profile
        for name in pr.task_registers + pr.egress_task_registers:
            self.std.bm_register_write(0, self.registers[name], task, 0)
        for name in pr.slot_registers:
            self.std.bm_register_write_range(0, self.registers[name], array * SLOTS,
                                             (array + 1) * SLOTS,
                                             INVALID_SEQ if name == "slot_seq" else 0)
        for name in pr.sender_registers:
            self.std.bm_register_write_range(0, self.registers[name], task * SENDERS,
                                             (task + 1) * SENDERS, 0)
        for e in entries:
            self.write(e)
        _, gid, members = group
        g = self.pre.bm_mc_mgrp_create(0, gid)
        nodes = []
        for host, rid in members:
            port = self.ports[host]
            n = self.pre.bm_mc_node_create(0, rid, "1" + "0" * port, "")  # bit PORT set
            self.pre.bm_mc_node_associate(0, g, n)
            nodes.append(n)
        self.groups[gid] = (g, nodes)

    @_serialized
    def remove_task(self, task, array, entries):
        entries, group = entries
        for e in entries:
            self.delete(e)
        g, nodes = self.groups.pop(group[1])
        for n in nodes:
            self.pre.bm_mc_node_dissociate(0, g, n)
            self.pre.bm_mc_node_destroy(0, n)
        self.pre.bm_mc_mgrp_destroy(0, g)

    @_serialized
    def attach(self, task, entries, reader, vip_entry):
        if self.register_read("reader_addr", task) != 0:
            raise Refused("attach: task %d's reader is bound already (its HELLO came first)"
                          % task)
        written = []
        acks = dict(vip_entry.params, acks=1)
        try:
            self.modify(vip_entry)  # the same entry: its reader's ACKs refused from now
            for e in entries:
                self.write(e)
                written.append(e)
        except Exception as e:  # the switch refused an entry: nothing of the attach stays
            for w in written:
                self.delete(w)
            self.modify(Entry(vip_entry.table, vip_entry.key, vip_entry.action, acks))
            raise Refused("attach: the switch refused its entries: %s" % e)
        addr, port = reader
        self.std.bm_register_write(0, self.registers["reader_addr"], task, addr)
        self.std.bm_register_write(0, self.registers["reader_port"], task, port)

    @_serialized
    def progress(self, task):
        return self.register_read("ack_seq", task)


class P4RuntimeBackend(Backend):
    """Programs BMv2 over P4Runtime and writes the entries of each task."""

    def __init__(self, address, p4info_path, bmv2_json_path, ports, device_id=0,
                 election_id=1):
        import grpc
        from google.protobuf import text_format
        from p4.config.v1 import p4info_pb2
        from p4.v1 import p4data_pb2, p4runtime_pb2, p4runtime_pb2_grpc
        self.pb = p4runtime_pb2
        self.data = p4data_pb2
        self.ports = ports  # agent host -> egress port (multicast replicas)
        self.device_id = device_id
        self.election = p4runtime_pb2.Uint128(high=0, low=election_id)
        self.info = p4info_pb2.P4Info()
        with open(p4info_path) as f:
            text_format.Merge(f.read(), self.info)
        self._index()
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._stream = self.stub.StreamChannel(iter([p4runtime_pb2.StreamMessageRequest(
            arbitration=p4runtime_pb2.MasterArbitrationUpdate(
                device_id=device_id, election_id=self.election))]))
        next(self._stream)  # the arbitration answer: we are primary
        with open(bmv2_json_path, "rb") as f:
            config = p4runtime_pb2.ForwardingPipelineConfig(p4info=self.info,
                                                            p4_device_config=f.read())
        self.stub.SetForwardingPipelineConfig(p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=device_id, election_id=self.election, config=config,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT))

    def _index(self):
        """The p4info's tables (with their own actions) and registers by short name, once."""
        actions = {a.preamble.id: a for a in self.info.actions}
        self.tables = ByShortName()  # -> (table, {action's short name: action})
        for t in self.info.tables:
            self.tables.add(t.preamble.name, (t, {short_name(actions[r.id].preamble.name):
                                                  actions[r.id] for r in t.action_refs}))
        self.registers = ByShortName()
        for r in self.info.registers:
            self.registers.add(r.preamble.name, r)

    def table_entry(self, e):
        t, own = self.tables[e.table]
        a = own.get(e.action)
        if a is None:
            raise KeyError("table %s has no action %s" % (e.table, e.action))
        entry = self.pb.TableEntry(table_id=t.preamble.id)
        keys = list(e.key.values())
        for mf, value in zip(t.match_fields, keys):
            m = entry.match.add(field_id=mf.id)
            if isinstance(value, tuple):  # (value, prefix length): an LPM key
                m.lpm.value = canonical(value[0], mf.bitwidth)
                m.lpm.prefix_len = value[1]
            else:
                m.exact.value = canonical(value, mf.bitwidth)
        entry.action.action.action_id = a.preamble.id
        for p in a.params:
            entry.action.action.params.add(param_id=p.id,
                                           value=canonical(e.params[p.name], p.bitwidth))
        return entry

    def _write(self, updates):
        req = self.pb.WriteRequest(device_id=self.device_id, election_id=self.election)
        req.updates.extend(updates)
        self.stub.Write(req)

    def _register_updates(self, task, array):
        ups = []
        for name in TASK_REGISTERS:
            ups.append(self._register(name, task, 0))
        for name in SLOT_REGISTERS:
            init = INVALID_SEQ if name == "slot_seq" else 0
            for i in range(SLOTS):
                ups.append(self._register(name, array * SLOTS + i, init))
        for s in range(SENDERS):
            ups.append(self._register("isn_delta", task * SENDERS + s, 0))
        return ups

    def _register(self, name, index, value):
        r = self.registers[name]
        bits = r.type_spec.bitstring.bit.bitwidth
        entry = self.pb.Entity(register_entry=self.pb.RegisterEntry(
            register_id=r.preamble.id, index=self.pb.Index(index=index),
            data=self.data.P4Data(bitstring=canonical(value, bits))))
        return self.pb.Update(type=self.pb.Update.MODIFY, entity=entry)

    def _group(self, group, delete=False):
        _, gid, members = group
        g = self.pb.MulticastGroupEntry(multicast_group_id=gid)
        for host, rid in members:
            g.replicas.add(egress_port=self.ports[host], instance=rid)
        ent = self.pb.Entity(packet_replication_engine_entry=self.pb.PacketReplicationEngineEntry(
            multicast_group_entry=g))
        return self.pb.Update(type=self.pb.Update.DELETE if delete else self.pb.Update.INSERT,
                              entity=ent)

    def add_routes(self, hosts):
        self._write([self.pb.Update(type=self.pb.Update.INSERT,
                                    entity=self.pb.Entity(table_entry=self.table_entry(e)))
                     for e in route_entries(hosts, PROGRAMS["netec"].route_tables)])

    def add_task(self, task, array, entries):
        entries, group = entries
        self._write(self._register_updates(task, array))
        self._write([self.pb.Update(type=self.pb.Update.INSERT,
                                    entity=self.pb.Entity(table_entry=self.table_entry(e)))
                     for e in entries] + [self._group(group)])

    def remove_task(self, task, array, entries):
        entries, group = entries
        self._write([self.pb.Update(type=self.pb.Update.DELETE,
                                    entity=self.pb.Entity(table_entry=self.table_entry(e)))
                     for e in entries] + [self._group(group, delete=True)])

    def progress(self, task):
        r = self.registers["ack_seq"]
        req = self.pb.ReadRequest(device_id=self.device_id)
        req.entities.add(register_entry=self.pb.RegisterEntry(
            register_id=r.preamble.id, index=self.pb.Index(index=task)))
        for resp in self.stub.Read(req):
            for ent in resp.entities:
                return int.from_bytes(ent.register_entry.data.bitstring, "big")
        return 0


class BfrtBackend(Backend):
    """Writes the entries through bfrt_python (run the control plane inside bfshell)."""

    def __init__(self, bfrt=None, program="netec", ports=None):
        self.profile = PROGRAMS[program]
        if bfrt is None:
            import builtins
            bfrt = getattr(builtins, "bfrt", None)
            if bfrt is None:
                raise RuntimeError("no bfrt object: run the control plane inside bfshell "
                                   "(bfrt_python), or pass it")
        self.bfrt = bfrt
        self.pipe = getattr(bfrt, program).pipe
        self.ports = ports or {}  # agent host -> device port (multicast replicas)

    def _table(self, name):
        control = self.pipe.Egress if name in EGRESS_TABLES else self.pipe.Ingress
        return getattr(control, name)

    def add_routes(self, hosts):
        for e in route_entries(hosts, self.profile.route_tables):
            addr, prefix = e.key["hdr.ipv4.dst_addr"]
            self._table(e.table).add_with_route(dst_addr=addr, dst_addr_p_length=prefix,
                                                **e.params)

    def add_task(self, task, array, entries):
        entries, group = entries
        pr = self.profile
        for name in pr.task_registers:
            if pr.ack_bound and name == "ack_seq":
                stripes = next(e.params["stripes"] for e in entries
                               if "stripes" in e.params)
                self.pipe.Ingress.ack_seq.mod(REGISTER_INDEX=task, lo=0, hi=stripes)
            else:
                getattr(self.pipe.Ingress, name).mod(REGISTER_INDEX=task, f1=0)
        for name in pr.egress_task_registers:
            getattr(self.pipe.Egress, name).mod(REGISTER_INDEX=task, f1=0)
        for name in pr.slot_registers:
            reg = getattr(self.pipe.Ingress, name)
            for i in range(SLOTS):
                reg.mod(REGISTER_INDEX=array * SLOTS + i,
                        f1=INVALID_SEQ if name == "slot_seq" else 0)
        for name in pr.sender_registers:
            for s in range(SENDERS):
                getattr(self.pipe.Egress, name).mod(REGISTER_INDEX=task * SENDERS + s, f1=0)
        for e in entries:
            kw = {short_name(f): v for f, v in e.key.items()}
            kw.update(e.params)
            getattr(self._table(e.table), "add_with_" + e.action)(**kw)
        _, gid, members = group
        for host, rid in members:
            self.bfrt.pre.node.add(MULTICAST_NODE_ID=rid, MULTICAST_RID=rid,
                                   MULTICAST_LAG_ID=[], DEV_PORT=[self.ports[host]])
        self.bfrt.pre.mgid.add(MGID=gid, MULTICAST_NODE_ID=[rid for _, rid in members],
                               MULTICAST_NODE_L1_XID_VALID=[False] * len(members),
                               MULTICAST_NODE_L1_XID=[0] * len(members))

    def remove_task(self, task, array, entries):
        entries, group = entries
        for e in entries:
            self._table(e.table).delete(**{short_name(f): v for f, v in e.key.items()})
        _, gid, members = group
        self.bfrt.pre.mgid.delete(MGID=gid)
        for _, rid in members:
            self.bfrt.pre.node.delete(MULTICAST_NODE_ID=rid)

    def progress(self, task):
        ent = self.pipe.Ingress.ack_seq.get(REGISTER_INDEX=task, from_hw=True,
                                            print_ents=False)
        field = b"Ingress.ack_seq.lo" if self.profile.ack_bound else b"Ingress.ack_seq.f1"
        values = ent.data[field]  # one per pipe: the max is the truth
        return max(values) if isinstance(values, list) else values


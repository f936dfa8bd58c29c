// NetEC data plane, datagram mode with pre-multiplied survivors: the v1model twin of
// p4src/tna/netec_xor.p4 for BMv2 simple_switch. What it computes is what the TNA program
// computes: the same tables, registers and decisions, every register accessed once per pass
// (read-modify-write in one place, as a stateful ALU), the same three passes of a DATA packet
// and the same swapping of the payload's halves (generated/halves.p4): pass 1 admits and
// tracks, passes 2 and 3 sum one half each, and the stripe's completing packet leaves as its
// RESULT; EBSN's counters are egress's (raised or added by a first pass, read by each copy of
// the reader's ACK). What v1model does differently: it has one deparser, after egress, so a
// DATA packet recirculates from egress (through one port's queue, as through Tofino's
// recirculation port: second passes keep the order of first passes), and checksums are
// verified and computed in their own controls.
//
// One control per function, each applied once a pass from the short pipelines below:
//   xor/types.p4       constants, headers_t, metadata_t
//   xor/wire.p4        parser, checksums, deparser
//   xor/classify.p4    who sends, for which task (survivor_in, vip_in, reader_secret)
//   xor/admit.p4       a first pass's checks (pure)
//   xor/sums.p4        the 32 sum registers of a half
//   xor/parent.p4      a child task's parent: what its reader's packets become (partial sums)
//   common/            what both v1model programs keep: ackSeq, the slot tracker, the stripe
//                      count, EBSN's counters, the reader's address, forwarding
//
// Build: p4c-bm2-ss --arch v1model -o netec_xor.json netec_xor.p4

#include <core.p4>
#include <v1model.p4>

#include "../include/headers.p4"
#include "../include/netec_logic.p4"
#include "../generated/halves.p4"

#include "xor/types.p4"
#include "xor/wire.p4"
#include "xor/classify.p4"
#include "xor/admit.p4"
#include "xor/sums.p4"
#include "xor/parent.p4"
#include "common/ack_seq.p4"
#include "common/slot_tracker.p4"
#include "common/stripe_count.p4"
#include "common/ebsn_counters.p4"
#include "common/reader_address.p4"
#include "common/forward.p4"
#include "common/csum_replace16.p4"

control XorIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t std) {
    XorClassify() classify;
    XorSums() sums;
    StripeCount() stripe_count;
    AckSeq() acks;
    XorAdmit() admit;
    SlotTracker() tracker;
    ReaderAddress() reader;
    XorParent() parent;
    Forward() forward;
    CsumReplace16() fix_ids;     // a header's task ++ slot array rewritten
    CsumReplace16() fix_sender;  // ... its sender ++ flags
    counter(8, CounterType.packets) verdicts;  // DATA packets by verdict

    action drop_counted(bit<8> why) {
        verdicts.count((bit<32>)why);
        mark_to_drop(std);
    }
    // a task's packet on to the reader, from the VIP
    action from_vip_to(bit<32> addr, bit<16> port) {
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
        hdr.udp.src_port = hdr.udp.dst_port;
        hdr.ipv4.dst_addr = addr;
        hdr.udp.dst_port = port;
        hdr.udp.checksum = 0;
    }

    apply {
        meta.survivor = 0;
        meta.reader = 0;
        meta.parent = 0;
        meta.reader_acks = 0;
        meta.child_array = 0;
        meta.counter_task = 0;
        meta.secret_ok = 0;
        meta.recirculate = 0;
        meta.result = 0;
        meta.ebsn = 0;
        meta.counters = 0;
        meta.started_op = 0;
        meta.starts_inc = 0;
        meta.completes_inc = 0;
        if (!hdr.ipv4.isValid()) {  // (a sum pass has one: the parser takes it after the pass)
            mark_to_drop(std);
            return;
        }
        // A sum pass (2 or 3) carries the pass header, parsed only on a recirculated packet;
        // its task, slot array and slot are those pass 1 admitted (survivor_in's key), so it
        // needs no classify.
        // EBSN's counters are the task's whose header this is, also after a partial sum's
        // header was rewritten into its parent's
        meta.counter_task = hdr.netec.task;
        bool sum_pass = hdr.pass.isValid();
        if (!sum_pass) {
            classify.apply(hdr, meta);
        }
        bool corrupt = std.checksum_error == 1;
        bit<32> cell = (bit<32>)(hdr.netec.slot_array ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]);

        // ---- sums: half q into its half's cells; the last pass counts the packet ------------
        bit<1> half = 0;
        bit<1> last = 0;
        if (sum_pass && hdr.ethernet.ether_type == ETHERTYPE_SUM_SECOND) {
            half = 1;
            last = 1;
        } else if (sum_pass && hdr.netec.payload_len <= HALF_BYTES) {
            last = 1;  // one half: no third pass
        }
        if (sum_pass) {
            bit<32> sum_cell = (bit<32>)(hdr.netec.slot_array
                                         ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0] ++ half);
            sums.apply(hdr.q, sum_cell, hdr.pass.reset);
        }
        // only in its last pass are all of a packet's words in the sums, so a packet lost
        // between passes leaves its stripe short of k (stalled, never answered wrongly)
        bit<1> complete = 0;
        if (sum_pass && last == 1) {
            stripe_count.apply(cell, hdr.netec.seq, hdr.pass.k_minus1, complete);
        }
        // k = 1: every packet completes its stripe
        bool result = sum_pass && last == 1 && (complete == 1 || hdr.pass.k_minus1 == 0);

        // ---- ackSeq: an ACK's seq raises it, a first pass reads it ----------------------------
        bit<32> ack = 0;
        if (meta.survivor == 1 || meta.reader == 1) {
            bit<32> ack_in = 0;
            if (hdr.netec.type == NETEC_ACK && (meta.survivor == 1 || meta.reader_acks == 1)) {
                ack_in = hdr.netec.seq;
            }
            bit<32> task = (bit<32>)meta.task;
            bit<32> bound = meta.cfg.last_seq + 1;
            if (meta.survivor == 0) {
                task = (bit<32>)meta.reader_task;
                bound = meta.reader_stripes;
            }
            acks.apply(task, ack_in, bound, ack);
        }

        // ---- pass 1: admit, then track ----------------------------------------------------
        bool first_pass = meta.survivor == 1 && !corrupt && hdr.netec.type == NETEC_DATA;
        bit<8> verdict = 0;
        if (first_pass) {
            admit.apply(hdr.netec, meta.words_ok, meta.cfg, ack, verdict);
        }
        bit<2> track = TRACK_NONE;
        if (first_pass && verdict == 0) {
            track = TRACK_ADMIT;
        } else if (result) {
            track = TRACK_RELEASE;  // the RESULT's slot is free again
        }
        bit<8> taken;
        bit<16> dup;
        tracker.apply(track, cell, hdr.netec.seq, meta.sender_bit, taken, dup);

        // ---- the reader's address: read for a RESULT or a survivor's packet to the reader,
        // learned from the task's first HELLO that carries its secret ------------------------
        bool from_agent = meta.survivor == 1 && !corrupt && hdr.netec.type != NETEC_DATA;
        bool proving_hello = meta.reader == 1 && !corrupt && hdr.netec.type == NETEC_HELLO
                             && meta.secret_ok == 1;
        bit<2> reader_op = 0;
        bit<32> reader_task = (bit<32>)meta.task;
        if (result) {
            reader_op = READER_READ;
            reader_task = (bit<32>)hdr.netec.task;
        } else if (from_agent) {
            reader_op = READER_READ;
        } else if (proving_hello) {
            reader_op = READER_LEARN;
            reader_task = (bit<32>)meta.reader_task;
        }
        bit<32> raddr = 0;
        bit<16> rport = 0;
        if (reader_op != 0) {
            reader.apply(reader_op, reader_task, hdr.ipv4.src_addr, hdr.udp.src_port, raddr,
                         rport);
        }
        // ... and whether that reader is a parent switch: the packet then leaves as the
        // parent's, from the sender the child's partial sum is there
        bit<1> attached = 0;
        bit<8> parent_task = 0;
        bit<8> parent_array = 0;
        bit<8> parent_sender = 0;
        bit<16> parent_slot_mask = 0;
        if (reader_op == READER_READ) {
            parent.apply((bit<8>)reader_task, attached, parent_task, parent_array,
                         parent_sender, parent_slot_mask);
        }
        bit<16> old_ids = hdr.netec.task ++ hdr.netec.slot_array;
        bit<16> old_sender = hdr.netec.sender ++ hdr.netec.flags;
        bool ids_moved = false;     // the checksum follows them (a RESULT's is computed whole)
        bool sender_moved = false;

        // ---- what becomes of the packet ----------------------------------------------------
        bit<2> route = 0;
        if (sum_pass) {
            if (last == 0) {
                hdr.ethernet.ether_type = ETHERTYPE_SUM_SECOND;
                std.egress_spec = RECIRC_PORT;
                meta.recirculate = 1;
            } else if (!result) {
                drop_counted(V_AGGREGATE);  // its stripe is not complete yet
            } else {
                verdicts.count((bit<32>)V_COMPLETE);
                meta.counters = 1;  // through egress: the completes counter (EBSN)
                meta.completes_inc = 1;
                meta.result = 1;    // the stripe's RESULT: its checksum over header and words
                hdr.pass.setInvalid();
                hdr.ethernet.ether_type = ETHERTYPE_IPV4;
                if (attached == 1) {
                    // the partial sum: the parent's DATA of its sender, in the parent's ring
                    hdr.netec.type = NETEC_DATA;
                    hdr.netec.task = parent_task;
                    hdr.netec.slot_array = parent_array;
                    hdr.netec.sender = parent_sender;
                    hdr.netec.slot = hdr.netec.seq[15:0] & parent_slot_mask;
                } else {
                    hdr.netec.type = NETEC_RESULT;
                    hdr.netec.sender = 0;
                }
                from_vip_to(raddr, rport);
                route = ROUTE_RESULT;
            }
        } else if (meta.survivor == 1 && corrupt) {
            mark_to_drop(std);  // a task's NetEC packet, corrupt: never summed
        } else if (first_pass) {
            if (verdict != 0) {
                drop_counted(verdict);
            } else if (dup != 0) {
                drop_counted(V_DUPLICATE);
            } else {
                // counted (AGGREGATE or COMPLETE) in its last pass; through egress (EBSN's
                // counters), then back for the sum passes
                hdr.pass.setValid();
                hdr.pass.k_minus1 = meta.cfg.k_minus1;
                hdr.pass.reset = taken == SLOT_SAME ? 8w0 : 8w1;
                meta.counters = 1;
                meta.started_op = hdr.netec.seq + 1;
                meta.starts_inc = taken == SLOT_FREE ? 32w1 : 32w0;
                hdr.ethernet.ether_type = ETHERTYPE_SUM_FIRST;
                std.egress_spec = RECIRC_PORT;
                meta.recirculate = 1;
            }
        } else if (from_agent) {
            from_vip_to(raddr, rport);  // an agent's HELLO (an error) or ACK
            if (attached == 1) {  // ... to the parent, as its survivor's: it fails the parent
                hdr.netec.task = parent_task;
                hdr.netec.slot_array = parent_array;
                hdr.netec.sender = parent_sender;
                ids_moved = true;
                sender_moved = true;
            }
            route = ROUTE_AGENT_TO_READER;
        } else if (meta.reader == 1) {
            // the reader's ACK or HELLO: to every survivor (egress: addresses, sender, EBSN's
            // counters read, the ACK's window)
            if (corrupt) {
                mark_to_drop(std);
            } else if (meta.parent == 1) {
                // the parent's copy of its reader's ACK (parent_in checked its source and
                // sender): this task's reader ACK. The parent's HELLO copies start nothing
                // here: the reader's own HELLO to this VIP starts the survivors.
                if (hdr.netec.type != NETEC_ACK || hdr.netec.seq > meta.reader_stripes) {
                    drop_counted(V_MISMATCH);
                } else {
                    hdr.netec.task = meta.reader_task;
                    hdr.netec.slot_array = meta.child_array;
                    meta.counter_task = meta.reader_task;
                    ids_moved = true;
                    meta.ack = ack;
                    meta.counters = 1;
                    meta.ebsn = 1;
                    std.mcast_grp = (bit<16>)meta.reader_task + 1;
                }
            } else if (hdr.netec.type == NETEC_ACK) {
                if (meta.reader_acks == 0 || hdr.netec.seq > meta.reader_stripes
                        || hdr.netec.sender != NETEC_READER) {
                    drop_counted(V_MISMATCH);
                } else {
                    meta.ack = ack;
                    meta.counters = 1;
                    meta.ebsn = 1;
                    std.mcast_grp = (bit<16>)meta.reader_task + 1;
                }
            } else if (hdr.netec.type == NETEC_HELLO && meta.secret_ok == 0) {
                drop_counted(V_NO_SECRET);  // binds nothing, reaches no survivor
            } else if (hdr.netec.type == NETEC_HELLO) {
                std.mcast_grp = (bit<16>)meta.reader_task + 1;
            } else {
                drop_counted(V_MISMATCH);  // a reader sends ACKs and HELLOs only
            }
        } else {
            route = ROUTE_TRANSIT;  // not a task's: forwarded as it is
        }
        if (ids_moved) {
            fix_ids.apply(hdr.netec.checksum, old_ids, hdr.netec.task ++ hdr.netec.slot_array);
        }
        if (sender_moved) {
            fix_sender.apply(hdr.netec.checksum, old_sender,
                             hdr.netec.sender ++ hdr.netec.flags);
        }
        if (route != 0) {
            forward.apply(route, hdr.ipv4, hdr.ethernet, std);
        }
    }
}

control XorEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t std) {
    EbsnCounters() counters;
    EbsnWindow() ebsn;
    CsumReplace16() fix_sender;
    CsumReplace16() fix_window;
    bit<8> copy_sender = 0;
    // a reader's packet, copied to each survivor: from the VIP to its agent
    action to_survivor(bit<32> agent_addr, bit<16> agent_port, bit<48> agent_mac,
                       bit<8> sender) {
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;  // the VIP
        hdr.udp.src_port = hdr.udp.dst_port;
        hdr.ipv4.dst_addr = agent_addr;
        hdr.udp.dst_port = agent_port;
        hdr.ethernet.dst_addr = agent_mac;
        copy_sender = sender;
        hdr.udp.checksum = 0;
    }
    table replica {
        key = { std.egress_rid : exact; }  // task * NETEC_SENDERS + sender + 1
        actions = { to_survivor; NoAction; }
        const default_action = NoAction();
        size = NETEC_SENDER_CELLS;
    }

    apply {
        bit<32> started = 0;
        bit<32> partial = 0;
        if (meta.counters == 1) {
            counters.apply((bit<32>)meta.counter_task, meta.started_op, meta.starts_inc,
                           meta.completes_inc, started, partial);
        }
        if (meta.recirculate == 1) {
            // field list 0 is empty: the pass header and the ethertype carry what the next
            // pass needs, as on Tofino, where no metadata survives recirculation
            recirculate_preserving_field_list(0);
            return;
        }
        if (std.egress_rid != 0) {
            if (replica.apply().hit) {
                bit<16> old_word = hdr.netec.sender ++ hdr.netec.flags;
                hdr.netec.sender = copy_sender;
                fix_sender.apply(hdr.netec.checksum, old_word,
                                 hdr.netec.sender ++ hdr.netec.flags);
                if (meta.ebsn == 1) {
                    bit<16> old_window = hdr.netec.window;
                    ebsn.apply(meta.ack, started, partial, meta.exposed, hdr.netec.window);
                    fix_window.apply(hdr.netec.checksum, old_window, hdr.netec.window);
                }
            } else {
                mark_to_drop(std);
            }
        }
    }
}

V1Switch(XorParser(), XorVerifyChecksum(), XorIngress(), XorEgress(), XorComputeChecksum(),
         XorDeparser()) main;

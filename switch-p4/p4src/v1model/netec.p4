// NetEC data plane, v1model twin of p4src/tna/netec.p4 (BMv2 simple_switch).
//
// It computes what the TNA program computes: every register is accessed once per pass
// (read-modify-write in one place, as a Tofino stateful ALU would), every table applies once
// per pass, and a DATA packet takes the same passes: pass 1 admits and tracks it, one sum
// pass per part of its payload multiplies and sums that part, rotating the payload on the
// wire by it (generated/lanes.p4); the last pass counts the stripe's packets and the k-th
// leaves as the RESULT. What v1model does differently: it has one deparser, after egress, so a
// DATA packet recirculates from egress (through one port's queue, as through Tofino's
// recirculation port), and checksums are verified and computed in their own controls.
// docs/protocol.md (version 3) is what it implements; switch-p4/README.md describes the
// pipeline; netec_p4/model/pipeline.py is its executable model.
//
// One control per function, each applied once a pass from the short pipelines below:
//   tcp/types.p4       constants, headers_t, metadata_t
//   tcp/wire.p4        parser, checksums, deparser
//   tcp/classify.p4    who sends, for which task; its configuration and coefficient
//   tcp/sums.p4        a sum pass's multiply and its part's 4 sum registers
//   tcp/proxy.p4       the reader's proof, the SYN-ACKs answered, each survivor's ISN delta
//   common/            what both v1model programs keep: ackSeq, the slot tracker, the stripe
//                      count, EBSN's counters, the reader's address, forwarding
//   ../include/        what both architectures compute alike: admission, the reader's ACK
//                      check, EBSN's window (netec_logic.p4)
//
// Build: p4c-bm2-ss --arch v1model -o netec.json --p4runtime-files netec.p4info.txtpb netec.p4
//        p4test --arch v1model netec.p4

#include <core.p4>
#include <v1model.p4>

#include "../include/headers.p4"
#include "../include/netec_logic.p4"
#include "../generated/lanes.p4"

#if NETEC_PASS_BYTES != 16
#error "lanes.p4 is generated for parts of 4 words"
#endif

#include "tcp/types.p4"
#include "tcp/wire.p4"
#include "tcp/classify.p4"
#include "tcp/sums.p4"
#include "tcp/proxy.p4"
#include "common/ack_seq.p4"
#include "common/slot_tracker.p4"
#include "common/stripe_count.p4"
#include "common/ebsn_counters.p4"
#include "common/reader_address.p4"
#include "common/forward.p4"
#include "common/csum_replace16.p4"

control NetecIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t std) {
    NetecClassify() classify;
    MultiplySums() sums;
    StripeCount() stripe_count;
    AckSeq() acks;
    EbsnCounters() counters;
    AdmitData() admit;
    SlotTracker() tracker;
    ReaderProof() proof;
    SynAcks() synacks;
    ReaderAddress() reader;
    ReaderAckCheck() ack_check;
    EbsnWindow() ebsn;
    Forward() forward;
    counter(8, CounterType.packets) verdicts;  // DATA packets by verdict

    // The reader's segment after its proof is read, decided as the TNA program decides it, by
    // the same entries (netec_logic.p4).
    action drop_counted(bit<8> why) {
        verdicts.count((bit<32>)why);
        mark_to_drop(std);
    }
    action drop_uncounted() {
        mark_to_drop(std);
    }
    action to_survivors() {
        std.mcast_grp = (bit<16>)meta.task + 1;  // replicas: one per survivor
    }
    action ack_to_survivors() {
        meta.netec_dirty = 1;  // its window rewritten
        std.mcast_grp = (bit<16>)meta.task + 1;
    }
    table reader_ack_verdict {
        key = { meta.proven : ternary; meta.ack_bad : ternary; meta.words_ok : ternary; }
        actions = { drop_counted; ack_to_survivors; }
        const default_action = ack_to_survivors();
        const entries = {
            READER_ACK_VERDICT_ENTRIES
        }
    }
    table reader_verdict {
        key = { meta.proven : ternary; meta.syn : ternary; meta.hello_no_secret : ternary;
                meta.payload_no_secret : ternary; }
        actions = { drop_counted; drop_uncounted; to_survivors; }
        const default_action = to_survivors();
        const entries = {
            READER_VERDICT_ENTRIES
        }
    }
    // a task's segment on to the reader, from the VIP
    action from_vip_to(bit<32> addr, bit<16> port) {
        hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
        hdr.tcp.src_port = hdr.tcp.dst_port;
        hdr.ipv4.dst_addr = addr;
        hdr.tcp.dst_port = port;
    }

    apply {
        meta.to_reader = 0;
        meta.synack = 0;
        meta.synack_last = 0;
        meta.recirculate = 0;
        meta.netec_dirty = 0;
        meta.tcp_dirty = 0;
        if (!hdr.ipv4.isValid()) {
            mark_to_drop(std);
            return;
        }
        log_a_t log_coeff;
        bit<16> sender_bit;
        classify.apply(hdr, meta, log_coeff, sender_bit);

        // ---- what the packet is ----------------------------------------------------------
        bool sum_pass = hdr.pass.isValid();
        bool last_pass = sum_pass && meta.last_pass == 1;
        bool first_pass = !sum_pass && meta.role == ROLE_SURVIVOR && hdr.netec.isValid()
                          && hdr.netec.type == NETEC_DATA;
        bool reader_ack = !sum_pass && meta.role == ROLE_READER && hdr.netec.isValid()
                          && hdr.netec.type == NETEC_ACK;
        // a task's segment that the branches below may pass: its task configured, its TCP and
        // NetEC checksums sound (other traffic is only forwarded: a payload that merely looks
        // like a NetEC header is none of ours)
        bool task_ok = meta.role != ROLE_NONE && meta.no_cfg == 0 && std.checksum_error == 0;
        bool survivor_segment = !sum_pass && !first_pass && task_ok
                                && meta.role == ROLE_SURVIVOR;
        bool reader_segment = !sum_pass && task_ok && meta.role == ROLE_READER && meta.frag == 0;
        bit<32> task = (bit<32>)meta.task;
        bit<32> cell = (bit<32>)(hdr.netec.slot_array ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0]);

        // ---- a sum pass: part q times the coefficient into its part's cells -----------------
        if (sum_pass) {
            bit<32> sum_cell = (bit<32>)(hdr.netec.slot_array
                                         ++ hdr.netec.slot[NETEC_SLOTS_LOG2 - 1:0] ++ meta.part);
            sums.apply(hdr.q, log_coeff, sum_cell, hdr.pass.reset);
        }
        // the stripe's packets summed (a count another stripe left restarts); the k-th
        // completes it (k = 1: every packet does)
        bit<1> complete = 0;
        if (last_pass) {
            stripe_count.apply(cell, hdr.netec.seq, hdr.pass.k_minus1, complete);
        }
        bool result = last_pass && (complete == 1 || hdr.pass.k_minus1 == 0);

        // ---- ackSeq: the reader's sound ACK raises it, a first pass reads it -----------------
        bit<32> ack = 0;
        if (first_pass || reader_ack) {
            bit<32> ack_in = 0;
            if (reader_ack && hdr.netec.sender == NETEC_READER && meta.words_ok == 1
                    && std.checksum_error == 0) {
                ack_in = hdr.netec.seq;
            }
            acks.apply(task, ack_in, meta.cfg.stripes, ack);
        }
        // ---- EBSN's counters: sum pass 0 raises maxStarted + 1 and adds a stripe started in a
        // free slot, the last pass adds a completed one, the reader's ACK reads them ----------
        bit<32> started = 0;
        bit<32> partial = 0;
        if (sum_pass || reader_ack) {
            bit<32> started_op = 0;
            bit<32> starts_inc = 0;
            if (sum_pass && meta.part == 0) {
                started_op = hdr.netec.seq + 1;
                starts_inc = (bit<32>)hdr.pass.starts;
            }
            counters.apply(task, started_op, starts_inc, result ? 32w1 : 32w0, started, partial);
        }

        // ---- pass 1: admit, then track ----------------------------------------------------
        bit<8> verdict = 0;
        if (first_pass && task_ok) {
            // seq's low 16 bits (Tofino takes them with an identity hash)
            admit.apply(hdr.netec, meta.words_ok, meta.cfg, ack, hdr.netec.seq[15:0], verdict);
            // one connection, one survivor (flags side by side on Tofino)
            bool bad_header = hdr.netec.version != NETEC_VERSION || hdr.netec.reserved != 0
                              || hdr.netec.flags != 0;
            bool bad_ids = hdr.netec.task != meta.task || hdr.netec.slot_array != meta.slot_array
                           || hdr.netec.sender != meta.sender;
            if (bad_header || bad_ids || sender_bit == 0) {
                verdict = V_MISMATCH;
            }
        }
        bit<2> track = TRACK_NONE;
        if (first_pass && task_ok && verdict == 0) {
            track = TRACK_ADMIT;
        } else if (result) {
            track = TRACK_RELEASE;  // a retransmission after a lost RESULT starts afresh
        }
        bit<8> taken;
        bit<16> dup;
        tracker.apply(track, cell, hdr.netec.seq, sender_bit, taken, dup);

        // ---- the proxy: the reader's proof, the SYN-ACKs answered, the reader's address -------
        // The reader proves itself with its HELLO's secret (reader_secret). Until then only its
        // handshake and segments without a payload reach the survivors, and a SYN (re)binds the
        // VIP; the proving HELLO binds it to its own source, and from then on nothing rebinds
        // it and SYNs are dropped; a HELLO without the secret never passes.
        meta.proven = 0;
        if (reader_segment) {
            proof.apply(task, meta.secret_ok, meta.proven);
        }
        bool unproven_segment = reader_segment && !reader_ack && meta.proven == 0;
        bit<2> synack_op = 0;
        if (survivor_segment && meta.syn == 1) {
            synack_op = SYNACK_ANSWER;
        } else if (unproven_segment && meta.syn_bare == 1) {
            synack_op = SYNACK_CLEAR;
        }
        bit<16> answered = 0;
        if (synack_op != 0) {
            synacks.apply(synack_op, task, meta.synack_bit, answered);
        }
        bit<2> reader_op = 0;
        bit<32> reader_task = task;
        if (result) {
            reader_op = READER_READ;
            reader_task = (bit<32>)hdr.netec.task;
        } else if (survivor_segment) {
            reader_op = READER_READ;
        } else if (unproven_segment && meta.may_bind == 1) {
            reader_op = READER_BIND;
        }
        bit<32> raddr = 0;
        bit<16> rport = 0;
        if (reader_op != 0) {
            reader.apply(reader_op, reader_task, hdr.ipv4.src_addr, hdr.tcp.src_port, raddr,
                         rport);
        }

        // ---- what becomes of the segment ---------------------------------------------------
        bit<2> route = 0;
        if (sum_pass) {
            if (!last_pass) {
                hdr.netec.reserved = hdr.netec.reserved + 1;  // the next part
                meta.recirculate = 1;
                std.egress_spec = RECIRC_PORT;
            } else if (!result) {
                drop_counted(V_AGGREGATE);  // its stripe is not complete yet
            } else {
                verdicts.count((bit<32>)V_COMPLETE);
                // the stripe's RESULT, from the VIP to the reader
                hdr.pass.setInvalid();
                hdr.ethernet.ether_type = ETHERTYPE_IPV4;
                hdr.netec.type = NETEC_RESULT;
                hdr.netec.sender = 0;  // row 0: this data plane rebuilds one row
                hdr.netec.reserved = 0;
                from_vip_to(raddr, rport);
                meta.netec_dirty = 1;
                meta.tcp_dirty = 1;
                meta.to_reader = 1;  // egress translates the sequence number
                route = ROUTE_RESULT;
            }
        } else if (meta.role != ROLE_NONE && !task_ok) {
            mark_to_drop(std);  // a task being removed, or a corrupt segment
        } else if (first_pass) {
            if (verdict != 0) {
                drop_counted(verdict);
            } else if (dup != 0) {
                drop_counted(V_DUPLICATE);
            } else {
                // counted (AGGREGATE or COMPLETE) in its last pass
                hdr.pass.setValid();
                hdr.pass.reset = taken == SLOT_SAME ? 8w0 : 8w1;
                hdr.pass.starts = taken == SLOT_FREE ? 8w1 : 8w0;
                hdr.pass.k_minus1 = meta.cfg.k_minus1;
                hdr.ethernet.ether_type = ETHERTYPE_NETEC_PASS;
                hdr.netec.reserved = 1;  // sum pass 0
                meta.recirculate = 1;
                std.egress_spec = RECIRC_PORT;
            }
        } else if (survivor_segment) {
            // a survivor's TCP control segments: to the reader, from the VIP
            if (meta.syn == 1) {
                meta.synack = 1;  // egress records its ISN, then drops all but the last
                meta.synack_last = answered == meta.cfg.k_mask ? 8w1 : 8w0;
                meta.to_reader = 1;
            } else if (meta.sender == 0 || hdr.netec.isValid()) {
                meta.to_reader = 1;  // sender 0 speaks for all (ACKs, FIN); errors pass
            }
            if (meta.to_reader == 1) {
                from_vip_to(raddr, rport);
                meta.tcp_dirty = 1;
                route = ROUTE_AGENT_TO_READER;
            } else {
                mark_to_drop(std);
            }
        } else if (meta.role == ROLE_READER && meta.frag == 1) {
            mark_to_drop(std);  // a fragment to a VIP: its payload is judged only whole
        } else if (reader_segment) {
            // the reader's segments: to every survivor (egress: addresses, SEQ/ACK)
            if (reader_ack) {
                ack_check.apply(hdr.netec, meta.cfg, meta.ack_bad);
                ebsn.apply(ack, started, partial, meta.cfg.exposed, hdr.netec.window);
                // an ACK before the proof reaches no survivor (ackSeq has moved, as on
                // Tofino, where it is read before the proof for every first pass)
                reader_ack_verdict.apply();
            } else {
                reader_verdict.apply();
            }
        } else {
            route = ROUTE_TRANSIT;  // not a task's: forwarded as it is
        }
        if (route != 0) {
            forward.apply(route, hdr.ipv4, hdr.ethernet, std);
        }
    }
}

control NetecEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t std) {
    IsnDeltas() isn_deltas;
    CsumReplace16() fix_netec_csum;

    action to_survivor(bit<32> agent_addr, bit<16> agent_port, bit<48> agent_mac,
                       bit<8> sender, bit<32> vip_addr, bit<16> vip_port) {
        hdr.ipv4.src_addr = vip_addr;
        hdr.tcp.src_port = vip_port;
        hdr.ipv4.dst_addr = agent_addr;
        hdr.tcp.dst_port = agent_port;
        hdr.ethernet.dst_addr = agent_mac;
        meta.sender = sender;
    }
    table replica {
        key = { std.egress_rid : exact; }  // rid = task * NETEC_SENDERS + sender + 1
        actions = { to_survivor; NoAction; }
        const default_action = NoAction();
        size = NETEC_SENDER_CELLS;
    }

    apply {
        if (meta.recirculate == 1) {
            // Field list 0 is empty (p4c-bm2-ss warns that no field is tagged with it): the
            // pass header carries all the next pass needs, as on Tofino, where no metadata
            // survives recirculation.
            recirculate_preserving_field_list(0);
            return;
        }
        bit<1> copied = 0;
        if (std.egress_rid != 0 && replica.apply().hit) {
            copied = 1;  // reader -> survivor s: its ACK numbers count in s's sequence space
        }
        // survivor s of the task (a copy's, or the one whose segment goes to the reader)
        bit<32> idx = ((bit<32>)meta.task << NETEC_SENDERS_LOG2) + (bit<32>)meta.sender;
        bit<2> isn_op = 0;
        if (copied == 1) {
            isn_op = ISN_READ;
        } else if (meta.to_reader == 1) {
            isn_op = meta.synack == 1 ? ISN_RECORD : ISN_READ;
        }
        bit<32> delta = 0;
        if (isn_op != 0) {
            isn_deltas.apply(isn_op, idx, hdr.tcp.seq_no - meta.vip_isn, delta);
        }
        if (copied == 1) {
            if ((hdr.tcp.flags & TCP_ACK) != 0) {
                hdr.tcp.ack_no = hdr.tcp.ack_no + delta;
            }
            if (hdr.netec.isValid() && hdr.netec.type == NETEC_HELLO) {
                // each survivor reads its own stream request out of the reader's HELLO
                bit<16> old_word = hdr.netec.sender ++ hdr.netec.flags;
                hdr.netec.sender = meta.sender;
                fix_netec_csum.apply(hdr.netec.checksum, old_word,
                                     hdr.netec.sender ++ hdr.netec.flags);
            }
            meta.tcp_dirty = 1;
        } else if (meta.to_reader == 1) {
            if (meta.synack == 1 && meta.synack_last == 0) {
                mark_to_drop(std);  // the reader gets one SYN-ACK: the last one
                return;
            }
            hdr.tcp.seq_no = hdr.tcp.seq_no - delta;  // survivor s's space -> the VIP's
        }
    }
}

V1Switch(NetecParser(), NetecVerifyChecksum(), NetecIngress(), NetecEgress(),
         NetecComputeChecksum(), NetecDeparser()) main;

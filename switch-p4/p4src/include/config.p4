// Compile-time constants of the NetEC data plane: the one place they are set. The resource
// analysis in switch-p4/README.md is worked out for these values; the control plane
// (netec_p4/control/netec_control.py Limits) and the pipeline model (netec_p4/model/pipeline.py)
// use the same numbers (src/test/python/test_pipeline_model.py checks).
#ifndef NETEC_CONFIG_P4
#define NETEC_CONFIG_P4

// Concurrent tasks; task id i uses slot array i, VIP port NETEC_VIP_PORT_BASE + i.
#define NETEC_TASKS 32
// Packet-stripes per slot array (S); a power of two: slot = seq & (S - 1).
#define NETEC_SLOTS 64
// Survivors per task (k) at most: tracker bits per slot.
#define NETEC_SENDERS 16
// Payload bytes per NetEC packet (P): the only size this switch accepts at setup.
#define NETEC_PAYLOAD 64
// Bytes multiplied per sum pass (a part: generated/lanes.p4); a DATA packet recirculates
// once per part after its first pass.
#define NETEC_PASS_BYTES 16
// Rebuilt streams per task (rows): the last DATA packet of a stripe becomes its one RESULT.
#define NETEC_ROWS 1

// log2 of the two above (slot-array cell = array << SLOTS_LOG2 | slot, sender cell likewise).
#define NETEC_SLOTS_LOG2 6
#define NETEC_SENDERS_LOG2 4

// Derived sizes.
#define NETEC_SLOT_CELLS 2048 // NETEC_TASKS * NETEC_SLOTS
#define NETEC_SENDER_CELLS 512 // NETEC_TASKS * NETEC_SENDERS
#define NETEC_WORDS_PER_PASS 4 // NETEC_PASS_BYTES / 4: 32-bit sum registers per pass
#define NETEC_SUM_CELLS 8192 // NETEC_SLOT_CELLS * 4: one sum cell per slot and part

// The datagram XOR program (tna/netec_xor.p4, v1model/netec_xor.p4: docs/protocol.md "Datagram
// mode" and "Pre-multiplied mode"): survivors multiply, the switch only XORs, so every stateful
// ALU it has left is a payload word. P bytes per packet in two passes of one half each
// (generated/halves.p4); tasks, slots and senders as above.
#define NETEC_XOR_PAYLOAD 256
#define NETEC_XOR_HALF_WORDS 32
#define NETEC_XOR_SUM_CELLS 4096 // NETEC_SLOT_CELLS * 2: one cell per slot and half

#endif

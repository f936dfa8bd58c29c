// The address and port of each task's reader: where its RESULTs and its survivors' packets go.
// The control plane clears them at setup; the reader's packet that may bind them does.
#ifndef NETEC_V1MODEL_READER_ADDRESS_P4
#define NETEC_V1MODEL_READER_ADDRESS_P4

#include "../../include/config.p4"

const bit<2> READER_READ = 1;   // a packet for the reader: where it goes
const bit<2> READER_LEARN = 2;  // the first proving HELLO binds them, later ones change nothing
const bit<2> READER_BIND = 3;   // bind them to this source (the TCP program, until the proof)

// ADDR, PORT: the reader's, after the access.
control ReaderAddress(in bit<2> op, in bit<32> task, in bit<32> src_addr, in bit<16> src_port,
                      out bit<32> addr, out bit<16> port) {
    register<bit<32>>(NETEC_TASKS) reader_addr;
    register<bit<16>>(NETEC_TASKS) reader_port;
    apply {
        reader_addr.read(addr, task);
        reader_port.read(port, task);
        // a read writes nothing back: the control plane may clear a reused task's cells
        // between this packet's read and write
        if (op != READER_READ) {
            if (op == READER_BIND || addr == 0) {
                addr = src_addr;
            }
            if (op == READER_BIND || port == 0) {
                port = src_port;
            }
            reader_addr.write(task, addr);
            reader_port.write(task, port);
        }
    }
}

#endif

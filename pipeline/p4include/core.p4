/* core.p4 for t2sim: the P4-16 core library declarations (P4-16 spec, section "core
 * library"), written for t2sim's front end. Names and signatures follow the spec. */
#ifndef _T2SIM_CORE_P4_
#define _T2SIM_CORE_P4_

error { NoError, PacketTooShort, NoMatch, StackOutOfBounds, HeaderTooShort,
        ParserTimeout, ParserInvalidArgument }

/* The packet a parser reads and a deparser writes. */
extern packet_in {
    void extract<T>(out T hdr);
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    T lookahead<T>();
    void advance(in bit<32> sizeInBits);
    bit<32> length();
}

extern packet_out {
    void emit<T>(in T hdr);
}

extern void verify(in bool check, in error toSignal);

/* The action a table runs when nothing else is said. */
action NoAction() {}

match_kind { exact, ternary, lpm }

#endif

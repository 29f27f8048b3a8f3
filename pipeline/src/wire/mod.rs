//! Wire formats: packet bytes and the frames the chip and the hosts exchange (Ethernet,
//! IPv4, TCP, UDP, and the PFC frames of the chip's MACs). The bottom layer: it knows nothing
//! of PHVs, programs or stages. A scheme's own frames and headers are the scheme's, in its
//! folder (`src/schemes/NAME/wire.rs`).

pub mod headers;
pub mod packet;
pub mod pfc;

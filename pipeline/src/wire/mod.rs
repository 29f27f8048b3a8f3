//! Wire formats: packet bytes and the frames the chip and the hosts exchange. The bottom layer:
//! it knows nothing of PHVs, programs or stages.

pub mod bfc;
pub mod headers;
pub mod pabo;
pub mod packet;
pub mod pfc;
pub mod qcn;

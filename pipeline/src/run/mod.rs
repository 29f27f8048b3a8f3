//! Running programs on the hardware: the sequential interpreter and the placed, stage-by-stage
//! form of a program that the gress pipelines step ([`exec`]), which runs the stages as
//! compiled at placement (`compiled`) or through the interpreter as the reference, both over
//! one register state (`state`) and one set of hashes (`hash`); and the built-in IPv4
//! forwarding ([`l3`]). The top layer: it joins `program`, `compile` and `hw`.

mod compiled;
pub mod exec;
mod hash;
pub mod l3;
mod state;

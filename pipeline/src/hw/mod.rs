//! The clocked hardware of a pipe: its parameters, the PHV and where the built-in headers
//! live in it, the parser/deparser engine, stage timing, and the gress and ghost pipelines
//! (rings of PHV slots that stages act on at their offsets), and the cells of register arrays
//! at their width. It runs whatever a placed program hands it ([`gress::StageProgram`]); it
//! does not know the program language.

pub mod cells;
pub mod checksum;
pub mod fields;
pub mod ghost;
pub mod gress;
pub mod layout;
pub mod params;
pub mod parser;
pub mod phv;
pub mod stage;

//! The program language: the IR a scheme builds (headers, parser graph, tables, actions,
//! register arrays, controls), its checks that resolve names into PHV fields and parser
//! tables, the built-in parser graph, the building blocks programs share, and example programs. Depends on `wire` and `hw`.

pub mod blocks;
pub mod builtin;
pub mod check;
pub mod error;
pub mod examples;
pub mod ir;
pub mod parser_check;
pub mod scope;

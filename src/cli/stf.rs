//! `t2sim stf --p4 FILE.p4 TEST.stf`: an STF packet test against a P4 program on the chip,
//! one line per expectation (`t2sim::stf`).

use super::emit;
use std::path::PathBuf;
use t2sim::stf::{load, run_stf};

/// `t2sim stf`: runs an STF test against a P4 program on the chip.
#[derive(clap::Args, Debug)]
pub struct StfArgs {
    /// The P4 program (T2NA or TNA).
    #[arg(long, value_name = "FILE.p4")]
    pub p4: PathBuf,
    /// The STF test.
    #[arg(value_name = "TEST.stf")]
    pub test: PathBuf,
    /// An include directory for the preprocessor (repeatable).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// A preprocessor definition NAME[=VALUE] (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
}

/// `t2sim stf`: `Ok(true)` when every expectation passed.
pub fn stf(args: &StfArgs) -> Result<bool, String> {
    let c = load(&args.p4, &args.include, &args.define)?;
    let shown = args.test.display().to_string();
    let text = t2sim::input::read_text(&args.test)?;
    let out = run_stf(&c, &shown, &text)?;
    let mut s = out.lines.join("\n");
    s.push('\n');
    emit(&s);
    Ok(out.passed)
}

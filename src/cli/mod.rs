//! The subcommands of the `t2sim` binary, one file each, and what they share: writing to
//! standard output.

pub mod compare;
pub mod report;
pub mod run;
pub mod stf;
pub mod sweep;

/// `wrote            FILE` lines.
pub fn wrote(files: &[String]) -> String {
    files
        .iter()
        .map(|f| format!("wrote            {f}\n"))
        .collect()
}

/// Exit status when standard output is a closed pipe (`t2sim params | head -1`): what a
/// Unix tool killed by SIGPIPE reports (128 + 13), without a message.
const BROKEN_PIPE_EXIT: i32 = 141;

/// Writes `text` to standard output. A closed pipe ends the program quietly, as it ends a
/// Unix tool; any other write error is reported.
/// For the commands that may build a scheme (each scheme's switch program is P4 compiled
/// through the C preprocessor): a clear error, before anything runs, when `cpp` is missing.
/// `what` names what needs it (a scenario file, a P4 file, or the schemes' programs).
pub fn schemes_can_build(what: &str) -> Result<(), String> {
    t2_pipeline::p4::preprocess::cpp_available(what)
}

pub fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            std::process::exit(BROKEN_PIPE_EXIT)
        }
        Err(e) => {
            eprintln!("t2sim: error: standard output: {e}");
            std::process::exit(2)
        }
    }
}

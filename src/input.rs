//! Reading the text files a user hands the commands (STF tests, entries, JSON programs and
//! parameters) with a cap on their size, so that `/dev/zero` or a runaway file is an error
//! naming it rather than memory exhausted.

use std::io::Read;
use std::path::Path;

/// Most bytes read from one input file: far beyond any test or program, far below memory.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The text of `path`, or an error naming it: unreadable, over [`MAX_INPUT_BYTES`], or not
/// UTF-8.
pub fn read_text(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "{shown}: larger than {} MiB, the most an input file may hold",
            MAX_INPUT_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{shown}: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_an_error_naming_it() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e,
            "/dev/zero: larger than 64 MiB, the most an input file may hold"
        );
        let e = read_text(Path::new("/no/such/file")).unwrap_err();
        assert!(e.starts_with("/no/such/file: "), "{e}");
    }
}

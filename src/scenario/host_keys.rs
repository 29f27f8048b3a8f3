//! The `[transport]` keys of scenario files that turn on a scheme's host feature
//! (`resend_bounced = true`, `[transport.qcn]`): each a [`HostKey`] a scheme registers in
//! `crate::schemes::HOST_KEYS`, which `check.rs` reads a file's `[transport]` against.

use t2_clock::Clock;
use t2_testbench::FeatureSpec;

/// A `[transport]` key that turns on a scheme's host feature without naming the scheme:
/// a flag (`honour_bfc_pause = true`) or a table of settings (`[transport.qcn]`).
pub struct HostKey {
    /// The key under `transport.`.
    pub key: &'static str,
    /// Whether a file that names a scheme may set it too: a scheme's own feature of the
    /// same kind then gives way to the file's. Otherwise the file may not (the scheme sets
    /// its hosts).
    pub with_scheme: bool,
    /// The feature the key's value asks for (`None`: none, e.g. a flag set false); the error
    /// names the key as it is to be shown (`transport.KEY...: problem`).
    pub build: fn(&toml::Value, &HostKeyContext) -> Result<Option<FeatureSpec>, String>,
}

/// What a key's value is checked against: the run's clock and the hosts' line rate.
#[derive(Clone, Copy, Debug)]
pub struct HostKeyContext {
    pub clock: Clock,
    pub link_bps: u64,
}

/// A flag: `true` asks for `spec()`, `false` for nothing; anything else is an error naming
/// `transport.KEY`.
pub fn flag(
    key: &str,
    value: &toml::Value,
    spec: impl FnOnce() -> FeatureSpec,
) -> Result<Option<FeatureSpec>, String> {
    match value {
        toml::Value::Boolean(true) => Ok(Some(spec())),
        toml::Value::Boolean(false) => Ok(None),
        other => Err(format!(
            "transport.{key}: invalid type: {}, expected a boolean",
            other.type_str()
        )),
    }
}

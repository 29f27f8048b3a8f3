//! QCN's reaction points as a scenario file asks for them without naming a scheme:
//! `[transport.qcn]` ([`HOST_KEY`], registered in `crate::schemes::HOST_KEYS`), every key
//! optional, the defaults the standard's (`QcnParams::standard`). A scheme's own QCN gives
//! way to the file's.

use super::{host, QcnParams};
use crate::scenario::host_keys::{HostKey, HostKeyContext};
use serde::Deserialize;

/// `[transport.qcn]`.
pub const HOST_KEY: HostKey = HostKey {
    key: "qcn",
    with_scheme: true,
    build: |value, cx: &HostKeyContext| {
        let table: QcnToml = value
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| format!("transport.qcn: {}", e.message()))?;
        let params = table.params(cx.clock, cx.link_bps)?;
        Ok(Some(host::spec(params)))
    },
};

/// `[transport.qcn]`: every key optional; the defaults are the standard QCN values
/// (`QcnParams::standard`).
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct QcnToml {
    pub gd_denominator: Option<u64>,
    pub byte_counter_bytes: Option<u64>,
    pub timer_us: Option<u64>,
    pub fast_recovery_stages: Option<u32>,
    pub r_ai_mbps: Option<u64>,
    pub r_hai_mbps: Option<u64>,
    pub min_rate_mbps: Option<u64>,
}

impl QcnToml {
    /// The parameters, checked against NICs of `link_bps`; errors name the key.
    pub fn params(&self, clock: t2_clock::Clock, link_bps: u64) -> Result<QcnParams, String> {
        let std = QcnParams::standard(clock);
        let mbps = |key: &str, v: Option<u64>, default: u64| match v {
            None => Ok(default),
            Some(m) => m
                .checked_mul(1_000_000)
                .ok_or_else(|| format!("transport.qcn.{key}: {m} is too large")),
        };
        let timer = match self.timer_us {
            None => std.timer,
            Some(0) => return Err("transport.qcn.timer_us: must be above 0".into()),
            Some(us) if us > 10_000_000 => {
                return Err(format!(
                    "transport.qcn.timer_us: {us} is above 10,000,000 (10 s)"
                ))
            }
            Some(us) => clock.ns_to_cycles_ceil(us * 1000),
        };
        let p = QcnParams {
            gd_denominator: self.gd_denominator.unwrap_or(std.gd_denominator),
            byte_counter_bytes: self.byte_counter_bytes.unwrap_or(std.byte_counter_bytes),
            timer,
            fast_recovery_stages: self
                .fast_recovery_stages
                .unwrap_or(std.fast_recovery_stages),
            r_ai_bps: mbps("r_ai_mbps", self.r_ai_mbps, std.r_ai_bps)?,
            r_hai_bps: mbps("r_hai_mbps", self.r_hai_mbps, std.r_hai_bps)?,
            min_rate_bps: mbps("min_rate_mbps", self.min_rate_mbps, std.min_rate_bps)?,
        };
        // Rates are given in Mb/s here, so name that key rather than the b/s field.
        if p.min_rate_bps > link_bps || p.min_rate_bps == 0 {
            return Err(format!(
                "transport.qcn.min_rate_mbps: {} is outside 1..={} (the link rate)",
                p.min_rate_bps / 1_000_000,
                link_bps / 1_000_000
            ));
        }
        p.validate("transport", link_bps)?;
        Ok(p)
    }
}

//! What a chip is built from: its ports (MAC, channels, speed), routes, program and the
//! Tofino2 parameters, the errors a configuration that cannot be built gets, and the one
//! check of a port speed that everything building ports uses.

use crate::chip::params::Tofino2Params;
use std::fmt;
use std::net::Ipv4Addr;
use t2_pipeline::ir::Program;

/// Port speeds a Tofino2 MAC supports, with the channels (lanes) each takes.
pub const PORT_SPEEDS: [(u64, u32); 8] = [
    (1_000_000_000, 1),
    (10_000_000_000, 1),
    (25_000_000_000, 1),
    (40_000_000_000, 4),
    (50_000_000_000, 1),
    (100_000_000_000, 2),
    (200_000_000_000, 4),
    (400_000_000_000, 8),
];

/// Local port (device port bits 6:0) of each pipe's recirculation port: one of the ports
/// 0-7 that Tofino2 can recirculate on in every pipe (pipe 0: 1 and 6-7).
pub const RECIRCULATION_LOCAL_PORT: u32 = 6;

/// Mirror sessions a chip has (Tofino2: 8-bit mirror ids).
pub const MIRROR_SESSIONS: usize = 256;

/// The device port of pipe `pipe`'s recirculation port.
pub fn recirculation_dev_port(pipe: u32) -> u16 {
    ((pipe << 7) | RECIRCULATION_LOCAL_PORT) as u16
}

/// The channels (lanes) a port of `bps` takes, or the error naming the speeds there are.
pub fn port_channels(bps: u64) -> Result<u32, String> {
    PORT_SPEEDS
        .iter()
        .find(|(b, _)| *b == bps)
        .map(|&(_, ch)| ch)
        .ok_or_else(|| {
            format!(
                "{bps} b/s is not a Tofino2 port speed (1G, 10G, 25G, 40G, 50G, 100G, 200G, 400G)"
            )
        })
}

/// Where a mirror session sends its copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MirrorSession {
    /// Port index the copies go out of.
    pub port: usize,
    /// Queue of that port (`qid`, taken modulo its queues as for any packet).
    pub qid: u8,
    /// Copies are cut to this many bytes (FCS excluded; at least 60, the minimum frame).
    pub truncate_bytes: Option<u32>,
}

/// [`PortSpec::mac`] of a port in port group 0 of its pipe: local ports 0-7, which on
/// Tofino2 are the PCIe CPU port (pipe 0, local 0), the Ethernet CPU ports (pipe 0, 2-5) and
/// the recirculation and packet-generator ports; its `channel` is its local port.
pub const PORT_GROUP_0: u32 = u32::MAX;

/// A port: which MAC and channels it uses, and its speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortSpec {
    pub pipe: u32,
    /// Front-panel MAC within the pipe, from 0, or [`PORT_GROUP_0`].
    pub mac: u32,
    /// First channel of the MAC the port uses; must be a multiple of its channel count.
    pub channel: u32,
    pub bps: u64,
}

impl PortSpec {
    /// Local port `local` (0-7) of pipe `pipe`'s port group 0 ([`PORT_GROUP_0`]).
    pub fn port_group_0(pipe: u32, local: u32, bps: u64) -> PortSpec {
        PortSpec {
            pipe,
            mac: PORT_GROUP_0,
            channel: local,
            bps,
        }
    }

    /// Tofino2 device port: pipe in bits 8:7, local port in 6:0, front panel from local 8.
    pub fn dev_port(&self, channels_per_mac: u32) -> u16 {
        if self.mac == PORT_GROUP_0 {
            return ((self.pipe << 7) | self.channel) as u16;
        }
        ((self.pipe << 7) | (8 + self.mac * channels_per_mac + self.channel)) as u16
    }

    /// The channels the port takes ([`port_channels`]).
    pub fn channels(&self) -> Result<u32, String> {
        port_channels(self.bps)
    }
}

/// A port and route layout for a chip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipConfig {
    pub params: Tofino2Params,
    pub ports: Vec<PortSpec>,
    /// Host routes: destination address to port index: `0..ports.len()` are the front-panel
    /// ports, `ports.len() + p` is pipe `p`'s recirculation port. Several routes to one
    /// destination form an ECMP group (`crate::chip::pipes`).
    pub routes: Vec<(Ipv4Addr, usize)>,
    /// A program to run in every pipe instead of the built-in IPv4 host-route forwarding; the
    /// routes then go into its `ipv4_host` table (`crate::chip::pipes`).
    pub program: Option<Program>,
}

impl ChipConfig {
    /// Checks that every port sits on a MAC and channels the chip has, at a speed its
    /// channels carry, without two ports sharing a channel; returns the table from device
    /// port to port index (recirculation ports not yet in it).
    pub(super) fn check_ports(&self) -> Result<Vec<Option<usize>>, ConfigError> {
        let params = self.params;
        let mut used =
            vec![false; (params.pipes * params.macs_per_pipe * params.channels_per_mac) as usize];
        let mut dev_ports = vec![None; 512];
        for (i, s) in self.ports.iter().enumerate() {
            let what = format!(
                "port {i} (pipe {} mac {} channel {})",
                s.pipe, s.mac, s.channel
            );
            let bad = |problem: String| ConfigError {
                what: what.clone(),
                problem,
            };
            if s.pipe >= params.pipes {
                return Err(bad(format!("the chip has pipes 0..{}", params.pipes)));
            }
            if s.mac == PORT_GROUP_0 {
                s.channels().map_err(bad)?;
                if s.channel >= 8 {
                    return Err(bad("port group 0 has local ports 0..8".into()));
                }
                if s.channel == RECIRCULATION_LOCAL_PORT && params.recirculation_bps_per_pipe() > 0
                {
                    return Err(bad(format!(
                        "local port {RECIRCULATION_LOCAL_PORT} is the pipe's recirculation port"
                    )));
                }
                let dev = s.dev_port(params.channels_per_mac) as usize;
                if dev_ports[dev].is_some() {
                    return Err(bad(format!(
                        "device port {dev} is already used by another port"
                    )));
                }
                dev_ports[dev] = Some(i);
                continue;
            }
            if s.mac >= params.macs_per_pipe {
                return Err(bad(format!("a pipe has MACs 0..{}", params.macs_per_pipe)));
            }
            let lane_bps = params.mac_bps / params.channels_per_mac as u64;
            let channels = s.channels().map_err(bad)?;
            if s.bps > lane_bps * channels as u64 {
                return Err(bad(format!(
                    "{} b/s needs more than {channels} channels of {lane_bps} b/s",
                    s.bps
                )));
            }
            if s.channel % channels != 0 || s.channel + channels > params.channels_per_mac {
                return Err(bad(format!(
                "a port of {} b/s takes {channels} channels and must start at a multiple of {channels} within 0..{}",
                s.bps, params.channels_per_mac
            )));
            }
            let base = ((s.pipe * params.macs_per_pipe + s.mac) * params.channels_per_mac) as usize;
            for c in s.channel..s.channel + channels {
                let slot = &mut used[base + c as usize];
                if *slot {
                    return Err(bad(format!("channel {c} is already used by another port")));
                }
                *slot = true;
            }
            dev_ports[s.dev_port(params.channels_per_mac) as usize] = Some(i);
        }
        Ok(dev_ports)
    }

    /// The host routes with each port index turned into its device port: `0..ports.len()`
    /// the front-panel ports, then pipe `p`'s recirculation port for `p < recirc_pipes`.
    pub(super) fn device_routes(
        &self,
        recirc_pipes: u32,
    ) -> Result<Vec<(Ipv4Addr, u16)>, ConfigError> {
        let params = self.params;
        let front = self.ports.len();
        let mut routes = Vec::with_capacity(self.routes.len());
        for (k, (dst, port)) in self.routes.iter().enumerate() {
            let dev_port = match self.ports.get(*port) {
            Some(spec) => spec.dev_port(params.channels_per_mac),
            None if *port < front + recirc_pipes as usize => {
                recirculation_dev_port((*port - front) as u32)
            }
            None => {
                return Err(ConfigError {
                    what: format!("route {k} ({dst})"),
                    problem: format!(
                        "port {port} does not exist (the chip has front-panel ports 0..{front} and recirculation ports {front}..{})",
                        front + recirc_pipes as usize
                    ),
                })
            }
        };
            routes.push((*dst, dev_port));
        }
        Ok(routes)
    }
}

/// A chip configuration that cannot be built, naming what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub what: String,
    pub problem: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.problem)
    }
}

impl std::error::Error for ConfigError {}

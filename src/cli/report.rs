//! `t2sim report`: a program (JSON file or a scheme's, built from its parameters) placed on
//! the MAU stages, with the feasibility report as text or JSON.

use super::emit;
use clap::Args;
use std::path::PathBuf;
use t2_pipeline::ir::Program;
use t2sim::schemes;
use t2sim::Tofino2Params;

#[derive(Args, Debug)]
#[group(id = "what", required = true, args = ["program", "scheme", "p4"])]
pub struct ReportArgs {
    /// The program file (JSON).
    #[arg(long)]
    pub program: Option<PathBuf>,
    /// A P4 program (T2NA or TNA) instead, lowered onto the IR (docs/p4.md).
    #[arg(long, value_name = "FILE.p4")]
    pub p4: Option<PathBuf>,
    /// With --p4: an include directory for the preprocessor (repeatable).
    #[arg(short = 'I', value_name = "DIR", requires = "p4")]
    pub include: Vec<PathBuf>,
    /// With --p4: a preprocessor definition NAME[=VALUE] (repeatable).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", requires = "p4")]
    pub define: Vec<String>,
    /// A scheme's program instead of a file (`t2sim schemes` lists them), built from its
    /// parameters for ports of --gbps.
    #[arg(long, conflicts_with = "program")]
    pub scheme: Option<String>,
    /// A scheme parameter, NAME=VALUE (repeatable); the others keep their defaults.
    #[arg(long = "set", value_name = "NAME=VALUE", requires = "scheme")]
    pub settings: Vec<String>,
    /// Port speed the scheme's program is built for, Gb/s (default 100).
    #[arg(long, requires = "scheme")]
    pub gbps: Option<u64>,
    /// Build the scheme's program for a network with equal-cost paths (ECMP selector).
    #[arg(long, requires = "scheme")]
    pub multipath: bool,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Exit with status 1 if the program does not fit.
    #[arg(long)]
    pub require_fit: bool,
    /// A JSON parameter file (start from `t2sim params`): stage count, stage latencies,
    /// PHV and clock come from it.
    #[arg(long)]
    pub params: Option<PathBuf>,
}

/// Prints the report; `Ok(false)` when the program does not fit.
pub fn report(args: &ReportArgs) -> Result<bool, String> {
    // These build a scheme's program; a program file is built already, so giving them with
    // `--program` is a mistake to say, not to ignore.
    if args.program.is_some() {
        let given = [
            ("--set", !args.settings.is_empty()),
            ("--gbps", args.gbps.is_some()),
            ("--multipath", args.multipath),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return Err(format!(
                "{flag}: builds a scheme's program, so it needs --scheme; --program's file is \
                 built already"
            ));
        }
    }
    let params = match &args.params {
        Some(p) => {
            // The size cap first (the parameter reader reads without one); a missing file
            // is the reader's to name.
            if p.exists() {
                t2sim::input::read_text(p)?;
            }
            Tofino2Params::from_json_file(p).map_err(|e| e.to_string())?
        }
        None => Tofino2Params::default(),
    };
    let (program, path) = match (&args.program, &args.scheme) {
        (Some(file), _) => {
            let path = file.display().to_string();
            let text = t2sim::input::read_text(file)?;
            (
                Program::from_json(&text).map_err(|e| format!("{path}: {e}"))?,
                path,
            )
        }
        (None, Some(name)) => (
            scheme_program(name, args, &params)?,
            format!("scheme {name}"),
        ),
        (None, None) => match &args.p4 {
            Some(file) => (
                t2sim::stf::load(file, &args.include, &args.define)?.program,
                file.display().to_string(),
            ),
            None => unreachable!("clap requires --program, --scheme or --p4"),
        },
    };
    let (report, headroom) =
        t2sim::headroom::feasibility(&program, &params).map_err(|e| format!("{path}: {e}"))?;
    if args.json {
        let mut json = serde_json::to_value(&report).expect("a report always serializes");
        json["headroom"] = serde_json::to_value(&headroom).expect("headroom always serializes");
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json).expect("a JSON value always prints")
        ));
    } else {
        emit(&format!("{report}\n{headroom}"));
    }
    Ok(report.fits)
}

/// The program of scheme `name` with `--set` applied, for ports of `--gbps`.
pub fn scheme_program(
    name: &str,
    args: &ReportArgs,
    params: &Tofino2Params,
) -> Result<Program, String> {
    let scheme = schemes::find(name)?;
    let overrides = schemes::parse_settings(&args.settings)?;
    let values = scheme
        .resolve(&overrides)
        .map_err(|e| format!("scheme {name}: {e}"))?;
    // A Tofino2 port speed, as a scenario's `topology.link_gbps` must be.
    let gbps = args.gbps.unwrap_or(100);
    let speeds: Vec<String> = t2sim::chip::PORT_SPEEDS
        .iter()
        .map(|(b, _)| (b / 1_000_000_000).to_string())
        .collect();
    let link_bps = gbps
        .checked_mul(1_000_000_000)
        .filter(|b| t2sim::chip::PORT_SPEEDS.iter().any(|(s, _)| s == b))
        .ok_or_else(|| {
            format!(
                "--gbps {gbps}: is not a Tofino2 port speed (Gb/s: {})",
                speeds.join(", ")
            )
        })?;
    let target = schemes::Target {
        params,
        link_bps,
        multipath: args.multipath,
    };
    Ok((scheme.build)(&values, &target).program)
}

//! P4 programs on the chip: compiling one with `-I`/`-D` ([`load`]), with table entries by
//! P4 names from a control-plane file ([`load_with_entries`]), and running a packet test in
//! the STF format of p4c's test suites on the modelled chip (cycle-accurate, one pipe;
//! [`run_stf`], the engine of `t2sim stf`).
//!
//! STF commands supported: `add TABLE [PRIORITY] KEY:VALUE... ACTION(PARAM:VALUE,...)`,
//! `setdefault TABLE ACTION(...)`, `packet PORT HEX`, `expect PORT HEX` (`*` matches any
//! nibble; a trailing `$` asks for the exact length), `wait`, and `#` comments; and ours:
//! `check_register`, `check_digest` and `value_set_add` (docs/p4.md, STF tests). Ports are
//! Tofino2 device ports of pipe 0 (8 to 71), each a 50 Gb/s port of its own. Packets are sent
//! in file order, one after another; expectations are matched per port in order, and
//! across ports in no particular order (the chip may reorder packets between ports).
//! Entries added before the first packet are the program's entries from cycle 0; an `add`
//! after packets first waits until every packet sent has left the chip (as `wait` does),
//! then takes effect through the chip's control plane.

use crate::{Chip, ChipConfig, PortSpec, Tofino2Params};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use t2_clock::{Cycle, LineRate};
use t2_pipeline::ir::{self, Entry, KeyValue, MatchKind};
use t2_pipeline::p4::{self, Compiled};
use t2_testbench::{Network, Probe, Stepping};

/// Compiles a P4 program with `-I` directories and `-D` definitions.
pub fn load(path: &Path, include: &[PathBuf], defines: &[String]) -> Result<Compiled, String> {
    let opts = p4::Options {
        include_dirs: include.to_vec(),
        defines: defines.to_vec(),
    };
    p4::compile(path, &opts).map_err(|e| e.to_string())
}

/// The program of P4 file `path` (preprocessed with `include` folders and `defines`) with
/// the entries of control-plane file `entries` (`run --p4 FILE.p4 -I DIR -D N=V --entries
/// FILE`).
pub fn load_with_entries(
    path: &Path,
    include: &[PathBuf],
    defines: &[String],
    entries: Option<&Path>,
) -> Result<ir::Program, String> {
    let c = load(path, include, defines)?;
    match entries {
        None => Ok(c.program),
        Some(f) => {
            let shown = f.display().to_string();
            let text = crate::input::read_text(f)?;
            with_entries(&c, &shown, &text)
        }
    }
}

/// One command of an STF file, with its line number.
#[derive(Clone, Debug, PartialEq)]
enum Cmd {
    Add {
        table: String,
        priority: Option<u64>,
        keys: Vec<(String, String)>,
        action: String,
        args: Vec<(Option<String>, String)>,
        /// `add ... = NAME`: a handle a `check_counter` may name the entry by.
        handle: Option<String>,
    },
    SetDefault {
        table: String,
        action: String,
        args: Vec<(Option<String>, String)>,
    },
    Packet {
        port: u16,
        bytes: Vec<u8>,
    },
    Expect {
        port: u16,
        /// Nibbles, `None` for `*`.
        nibbles: Vec<Option<u8>>,
        exact_len: bool,
    },
    Wait,
    /// `mirroring_add SESSION PORT`: mirror session SESSION sends its copies to PORT.
    MirroringAdd {
        session: u8,
        port: u16,
    },
    /// `check_counter NAME(INDEX) [packets|bytes] OP VALUE` (p4c's form; INDEX a number or
    /// an entry's handle, `$H` or `H`) and `check_register NAME(INDEX) OP VALUE` (ours:
    /// the format has no register check).
    Check(Check),
    /// `value_set_add NAME VALUE` (ours: the format has no value-set command): a value (a
    /// number, hex with `*` nibbles, or `V&&&M`) for parser value set NAME, before the first
    /// packet.
    ValueSetAdd {
        name: String,
        value: String,
    },
    /// `check_digest NAME FIELD:VALUE ...` (ours: the format has no digest check): the next
    /// digest NAME the chip recorded carries these values.
    CheckDigest {
        name: String,
        values: Vec<(String, u128)>,
        text: String,
    },
}

/// A check of a counter or register cell, made when the chip has gone idle.
#[derive(Clone, Debug, PartialEq)]
struct Check {
    counter: bool,
    name: String,
    index: CellIndex,
    /// For a counter: `Some(true)` packets, `Some(false)` bytes, `None` what it counts.
    packets: Option<bool>,
    cmp: ir::Cmp,
    /// The comparison as written (`==`, `<=`, ...).
    op: String,
    value: u64,
    /// The check as written, for its line of output.
    text: String,
}

/// A cell by number or by the handle of the entry that owns it (a DirectCounter's).
#[derive(Clone, Debug, PartialEq)]
enum CellIndex {
    Number(u32),
    Handle(String),
}

/// An STF test's outcome: one line per expectation (and per unexpected packet) and whether
/// all passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StfOutcome {
    pub lines: Vec<String>,
    pub passed: bool,
}

/// Parses `text` (file `name`); errors name the line.
fn parse_stf(name: &str, text: &str) -> Result<Vec<(usize, Cmd)>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: String| format!("{name}:{ln}: {why}");
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let cmd = match word.to_ascii_lowercase().as_str() {
            "add" => {
                // `add ... ACTION(...) = NAME` names the entry for a later `check_counter`.
                let (rest, handle) = match rest.rsplit_once(')') {
                    Some((body, tail)) if tail.trim().starts_with('=') => {
                        let h = tail.trim()[1..].trim();
                        if h.is_empty() || !h.chars().all(|c| c.is_alphanumeric() || c == '_') {
                            return Err(bad(format!("entry handle `{h}` is not a name")));
                        }
                        (format!("{body})"), Some(h.to_string()))
                    }
                    _ => (rest.to_string(), None),
                };
                let rest = rest.as_str();
                let (head, action, args) = split_action(rest).map_err(&bad)?;
                let mut toks = head.split_whitespace();
                let table = toks
                    .next()
                    .ok_or_else(|| bad("`add` needs a table".into()))?;
                let mut priority = None;
                let mut keys = Vec::new();
                for t in toks {
                    match t.rsplit_once(':') {
                        Some((k, v)) => keys.push((k.to_string(), v.to_string())),
                        None if priority.is_none() && keys.is_empty() => {
                            let p = parse_num(t).map_err(&bad)?;
                            let p = u32::try_from(p)
                                .map_err(|_| bad(format!("priority {p} is over 2^32 - 1")))?;
                            priority = Some(p as u64);
                        }
                        None => return Err(bad(format!("`{t}` is not KEY:VALUE"))),
                    }
                }
                Cmd::Add {
                    table: table.to_string(),
                    priority,
                    keys,
                    action,
                    args,
                    handle,
                }
            }
            "setdefault" => {
                let (head, action, args) = split_action(rest).map_err(&bad)?;
                Cmd::SetDefault {
                    table: head.trim().to_string(),
                    action,
                    args,
                }
            }
            "packet" | "expect" => {
                let (p, data) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let port = p
                    .parse::<u16>()
                    .map_err(|_| bad(format!("port `{p}` is not a number")))?;
                let mut data: String = data.chars().filter(|c| !c.is_whitespace()).collect();
                let exact_len = data.ends_with('$');
                if exact_len {
                    data.pop();
                }
                let mut nibbles = Vec::new();
                for ch in data.chars() {
                    nibbles.push(match ch {
                        '*' if word == "expect" => None,
                        c => Some(
                            c.to_digit(16)
                                .ok_or_else(|| bad(format!("`{c}` is not a hex digit")))?
                                as u8,
                        ),
                    });
                }
                if word == "packet" {
                    if exact_len {
                        return Err(bad(
                            "`$` ends an `expect` (an exact length), not a packet".into()
                        ));
                    }
                    if nibbles.len() % 2 == 1 {
                        return Err(bad("a packet has an odd number of hex digits".into()));
                    }
                    if nibbles.len() / 2 > MAX_FRAME_BYTES {
                        return Err(bad(format!(
                            "a packet of {} bytes: a port takes frames of at most {MAX_FRAME_BYTES} \
                             bytes (jumbo frames, FCS excluded)",
                            nibbles.len() / 2
                        )));
                    }
                    let bytes = nibbles
                        .chunks(2)
                        .map(|c| (c[0].unwrap_or(0) << 4) | c[1].unwrap_or(0))
                        .collect();
                    Cmd::Packet { port, bytes }
                } else {
                    Cmd::Expect {
                        port,
                        nibbles,
                        exact_len,
                    }
                }
            }
            "wait" => Cmd::Wait,
            "mirroring_add" => {
                let mut it = rest.split_whitespace();
                let (Some(s), Some(p), None) = (it.next(), it.next(), it.next()) else {
                    return Err(bad("expected `mirroring_add SESSION PORT`".into()));
                };
                let session = s
                    .parse::<u8>()
                    .map_err(|_| bad(format!("session `{s}` is not 0..=255")))?;
                let port = p
                    .parse::<u16>()
                    .map_err(|_| bad(format!("port `{p}` is not a number")))?;
                Cmd::MirroringAdd { session, port }
            }
            w @ ("check_counter" | "check_register") => {
                Cmd::Check(parse_check(w == "check_counter", rest).map_err(&bad)?)
            }
            "value_set_add" => {
                let mut it = rest.split_whitespace();
                let (Some(name), Some(value), None) = (it.next(), it.next(), it.next()) else {
                    return Err(bad("expected `value_set_add NAME VALUE`".into()));
                };
                Cmd::ValueSetAdd {
                    name: name.to_string(),
                    value: value.to_string(),
                }
            }
            "check_digest" => {
                let mut it = rest.split_whitespace();
                let name = it
                    .next()
                    .ok_or_else(|| bad("expected `check_digest NAME FIELD:VALUE ...`".into()))?;
                let mut values = Vec::new();
                for kv in it {
                    let (k, v) = kv
                        .split_once(':')
                        .ok_or_else(|| bad(format!("`{kv}`: expected FIELD:VALUE")))?;
                    values.push((k.to_string(), parse_num(v).map_err(&bad)?));
                }
                Cmd::CheckDigest {
                    name: name.to_string(),
                    values,
                    text: format!(
                        "check_digest {}",
                        rest.split_whitespace().collect::<Vec<_>>().join(" ")
                    ),
                }
            }
            other => {
                return Err(bad(format!(
                    "STF command `{other}` is not supported (add, setdefault, packet, expect, \
                     wait, mirroring_add, check_counter, check_register, check_digest, \
                     value_set_add)"
                )))
            }
        };
        out.push((ln, cmd));
    }
    Ok(out)
}

type Args = Vec<(Option<String>, String)>;

/// `NAME(INDEX) [packets|bytes] OP VALUE` (the `packets|bytes` only for a counter).
fn parse_check(counter: bool, rest: &str) -> Result<Check, String> {
    let word = if counter {
        "check_counter NAME(INDEX) [packets|bytes] OP VALUE"
    } else {
        "check_register NAME(INDEX) OP VALUE"
    };
    let form = || format!("expected `{word}`");
    let (name, after) = rest.split_once('(').ok_or_else(form)?;
    let (index, tail) = after.split_once(')').ok_or_else(form)?;
    let name = name.trim();
    let index = index.trim();
    let index = if let Some(h) = index.strip_prefix('$') {
        CellIndex::Handle(h.to_string())
    } else if index.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        let n = parse_num(index)?;
        CellIndex::Number(
            u32::try_from(n).map_err(|_| format!("cell index `{index}` is too large"))?,
        )
    } else {
        CellIndex::Handle(index.to_string())
    };
    let mut toks: Vec<&str> = tail.split_whitespace().collect();
    let packets = match toks.first() {
        Some(&"packets") if counter => Some(true),
        Some(&"bytes") if counter => Some(false),
        _ => None,
    };
    if packets.is_some() {
        toks.remove(0);
    }
    let [op, value] = toks[..] else {
        return Err(if toks.is_empty() {
            format!("a check without a condition checks nothing: {}", form())
        } else {
            form()
        });
    };
    let cmp = match op {
        // bf-p4c's STF files also write equality as `=`.
        "==" | "=" => ir::Cmp::Eq,
        "!=" => ir::Cmp::Ne,
        "<" => ir::Cmp::Lt,
        "<=" => ir::Cmp::Le,
        ">" => ir::Cmp::Gt,
        ">=" => ir::Cmp::Ge,
        _ => {
            return Err(format!(
                "`{op}` is not a comparison (==, =, !=, <, <=, >, >=)"
            ))
        }
    };
    let value = u64::try_from(parse_num(value)?).map_err(|_| format!("`{value}` is too large"))?;
    let text = format!(
        "{} {}",
        if counter {
            "check_counter"
        } else {
            "check_register"
        },
        rest.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    Ok(Check {
        counter,
        name: name.to_string(),
        index,
        packets,
        cmp,
        op: op.to_string(),
        value,
        text,
    })
}

/// Splits `HEAD ACTION(ARGS)` into the head, the action name and its arguments.
fn split_action(s: &str) -> Result<(String, String, Args), String> {
    let open = s
        .find('(')
        .ok_or_else(|| "expected an action call ACTION(...)".to_string())?;
    let close = s
        .rfind(')')
        .filter(|&c| c > open)
        .ok_or_else(|| "the action call has no `)`".to_string())?;
    let before = s[..open].trim_end();
    // After the last white space, whatever its width: U+0085 is white space of two bytes
    // (`+ 1` cut inside it, which the fuzzer found).
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(p, c)| p + c.len_utf8());
    let action = before[start..].to_string();
    let mut args = Vec::new();
    for a in s[open + 1..close].split(',') {
        let a = a.trim();
        if a.is_empty() {
            continue;
        }
        args.push(match a.split_once(':') {
            Some((n, v)) => (Some(n.trim().to_string()), v.trim().to_string()),
            None => (None, a.to_string()),
        });
    }
    Ok((before[..start].to_string(), action, args))
}

fn parse_num(s: &str) -> Result<u128, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u128::from_str_radix(h, 16),
        None => match s.strip_prefix("0b") {
            Some(b) => u128::from_str_radix(b, 2),
            None => s.parse(),
        },
    };
    r.map_err(|_| format!("`{s}` is not a number"))
}

/// A key value as STF writes it, for a key of `bits` bits matched as `kind`:
/// `V`, `0xA*B*` (ternary nibbles), `V&&&M`, or `V/LEN` (lpm).
fn key_value(v: &str, bits: u32, kind: MatchKind, last: bool) -> Result<KeyValue, String> {
    let full: u64 = if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let num = |s: &str| -> Result<u64, String> {
        let n = parse_num(s)?;
        if n > full as u128 {
            return Err(format!("`{s}` does not fit in {bits} bits"));
        }
        Ok(n as u64)
    };
    let masked = |value, mask| KeyValue {
        value,
        mask: Some(mask),
    };
    if let Some((a, m)) = v.split_once("&&&") {
        if kind == MatchKind::Exact {
            return Err("a mask in an exact table".into());
        }
        return Ok(masked(num(a)?, num(m)?));
    }
    if let Some((a, len)) = v.split_once('/') {
        if kind != MatchKind::Lpm || !last {
            return Err("a prefix length on a key that is not the table's lpm key".into());
        }
        let len: u8 = len
            .parse()
            .ok()
            .filter(|&l: &u8| l as u32 <= bits)
            .ok_or_else(|| format!("prefix length `{len}` of a {bits}-bit key (0 to {bits})"))?;
        return Ok(masked(num(a)?, ir::prefix_mask(bits as u8, len)));
    }
    if let Some(h) = v.strip_prefix("0x").filter(|h| h.contains('*')) {
        if kind == MatchKind::Exact {
            return Err("a wildcard in an exact table".into());
        }
        let (mut value, mut mask) = (0u64, 0u64);
        for c in h.chars() {
            value <<= 4;
            mask <<= 4;
            if c != '*' {
                value |= c.to_digit(16).ok_or_else(|| format!("`{c}` in `{v}`"))? as u64;
                mask |= 0xf;
            }
        }
        return Ok(masked(value & full, mask & full));
    }
    let value = num(v)?;
    Ok(match kind {
        MatchKind::Exact => KeyValue { value, mask: None },
        MatchKind::Lpm if !last => KeyValue { value, mask: None },
        _ => masked(value, full),
    })
}

/// The IR entry for an STF `add`.
fn entry(
    c: &Compiled,
    table: &str,
    keys: &[(String, String)],
    action: &str,
    args: &Args,
) -> Result<(String, Entry), String> {
    let t = c
        .table(table)
        .ok_or_else(|| format!("no table `{table}` in the program"))?;
    if t.const_entries {
        return Err(format!(
            "table `{}` has `const entries`: the program fixes its entries, so the control \
             plane adds none (P4 makes such a table immutable)",
            t.p4_name
        ));
    }
    if keys.len() != t.keys.len() {
        return Err(format!(
            "table `{}` has {} keys, the entry gives {}",
            t.p4_name,
            t.keys.len(),
            keys.len()
        ));
    }
    let mut kv = Vec::new();
    for (i, k) in t.keys.iter().enumerate() {
        let given = keys
            .iter()
            .find(|(n, _)| {
                // The key as written, its last name (`f1` for `hdr.data.f1`), or the IR field;
                // a header stack's index as `s[0]` or `s$0` (bmv2's) for the unrolled `s_0`.
                let n = stack_index_unrolled(n);
                n == k.name || n == k.ir_field || k.name.rsplit('.').next() == Some(n.as_str())
            })
            .ok_or_else(|| format!("the entry gives no value for key `{}`", k.name))?;
        kv.push(
            key_value(&given.1, k.bits, t.kind, i + 1 == t.keys.len())
                .map_err(|e| format!("key `{}`: {e}", k.name))?,
        );
    }
    Ok((
        t.ir_name.clone(),
        Entry {
            key: kv,
            action: action_call(c, table, action, args, false)?,
            members: Vec::new(),
        },
    ))
}

/// A key name with header-stack indices (`hdr.s[1].f`, bmv2's `hdr.s$1.f`) as the
/// unrolled headers' names (`hdr.s_1.f`).
fn stack_index_unrolled(n: &str) -> String {
    let mut out = String::new();
    let mut chars = n.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' => out.push('_'),
            ']' => {}
            '$' if chars.peek().is_some_and(|d| d.is_ascii_digit()) => out.push('_'),
            c => out.push(c),
        }
    }
    out
}

/// The IR call of an action of `table` named as STF names it (`forward`, `Ingress.forward`),
/// for an entry or (`default`) as the default action.
fn action_call(
    c: &Compiled,
    table: &str,
    action: &str,
    args: &Args,
    default: bool,
) -> Result<ir::ActionCall, String> {
    let t = c
        .table(table)
        .ok_or_else(|| format!("no table `{table}` in the program"))?;
    let short = action.rsplit('.').next().unwrap_or(action);
    let list = if default {
        &t.default_actions
    } else {
        &t.actions
    };
    let (_, ir_name) = list
        .iter()
        .find(|(local, _)| local == short)
        .ok_or_else(|| format!("table `{}` has no action `{action}`", t.p4_name))?;
    let info = c
        .actions
        .iter()
        // A copy that records a table's result (`forward@t`) takes its action's data.
        .find(|a| a.ir_name == ir_name.split('@').next().unwrap_or(ir_name))
        .ok_or_else(|| format!("action `{action}` is unknown"))?;
    if args.len() != info.params.len() {
        return Err(format!(
            "action `{action}` takes {} arguments, {} given",
            info.params.len(),
            args.len()
        ));
    }
    let mut vals = Vec::new();
    for (i, (p, bits)) in info.params.iter().enumerate() {
        let v = match args.iter().find(|a| a.0.as_deref() == Some(p.as_str())) {
            Some(a) => &a.1,
            None => match args.get(i) {
                Some((None, v)) => v,
                _ => return Err(format!("action `{action}`: no value for `{p}`")),
            },
        };
        let n = parse_num(v)?;
        if n >> bits != 0 {
            return Err(format!("`{p}` = {v} does not fit in {bits} bits"));
        }
        vals.push(n as u64);
    }
    Ok(ir::ActionCall::new(ir_name, &vals))
}

/// Where the entries of the program's tables sit: the place of every (IR table, key), the
/// const ones first; a DirectCounter's cell is its entry's place. Entries named by a
/// handle (`add ... = H`) by it. Held in maps, so that 100,000 entries cost linear time.
#[derive(Default)]
struct Places {
    places: HashMap<(String, Vec<KeyValue>), u64>,
    /// Entries given a place so far, by IR table.
    counts: HashMap<String, u64>,
    /// Handle: (IR table, place).
    handles: HashMap<String, (String, u64)>,
}

impl Places {
    fn place_of(&self, table: &str, key: &[KeyValue]) -> Option<u64> {
        self.places.get(&(table.to_string(), key.to_vec())).copied()
    }
    /// The place a new entry of `table` takes (after every place given so far).
    fn next(&self, table: &str) -> u64 {
        self.counts.get(table).copied().unwrap_or(0)
    }
    /// Records that the entry of `table` with `key` sits at `place` (a key met twice keeps
    /// its first place).
    fn push(&mut self, table: &str, key: &[KeyValue], place: u64) {
        self.places
            .entry((table.to_string(), key.to_vec()))
            .or_insert(place);
        *self.counts.entry(table.to_string()).or_default() += 1;
    }
    fn name(&mut self, handle: &Option<String>, table: &str, place: u64) -> Result<(), String> {
        if let Some(h) = handle {
            if self.handles.contains_key(h) {
                return Err(format!("entry handle `{h}` is given twice"));
            }
            self.handles.insert(h.clone(), (table.to_string(), place));
        }
        Ok(())
    }
}

/// An entry `add` stages: its IR table, priority, line, the entry and its handle.
type StagedEntry = (String, Option<u64>, usize, Entry, Option<String>);

/// The program with the entries and defaults of `cmds` (`add`, `setdefault`; other commands
/// are skipped) in its tables, and where its entries sit.
fn stage(
    c: &Compiled,
    test_name: &str,
    cmds: &[(usize, Cmd)],
) -> Result<(ir::Program, Places), String> {
    let at = |ln: usize, e: String| format!("{test_name}:{ln}: {e}");
    let mut program = c.program.clone();
    // Tables by IR name, and the const entries' keys, looked up once per `add`.
    let index: HashMap<String, usize> = program
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), i))
        .collect();
    let const_keys: HashSet<(&str, &[KeyValue])> = c
        .program
        .tables
        .iter()
        .flat_map(|t| {
            t.entries
                .iter()
                .map(|e| (t.name.as_str(), e.key.as_slice()))
        })
        .collect();
    // Staged entries in file order (`None` once a later `add` of its key replaced it), and
    // where each (table, key) is staged.
    let mut staged: Vec<Option<StagedEntry>> = Vec::new();
    let mut staged_at: HashMap<(String, Vec<KeyValue>), usize> = HashMap::new();
    for (ln, cmd) in cmds {
        match cmd {
            Cmd::Add {
                table,
                priority,
                keys,
                action,
                args,
                handle,
            } => {
                let (t, e) = entry(c, table, keys, action, args).map_err(|e| at(*ln, e))?;
                if const_keys.contains(&(t.as_str(), e.key.as_slice())) {
                    return Err(at(
                        *ln,
                        format!("table `{table}` has a const entry with this key"),
                    ));
                }
                // Adding a key again replaces its entry (what the compilers' STF suites
                // expect when they re-add a key with another action).
                if let Some(i) = staged_at.insert((t.clone(), e.key.clone()), staged.len()) {
                    staged[i] = None;
                }
                staged.push(Some((t, *priority, *ln, e, handle.clone())));
            }
            Cmd::SetDefault {
                table,
                action,
                args,
            } => {
                let mut call = action_call(c, table, action, args, true).map_err(|e| at(*ln, e))?;
                let t = c.table(table).unwrap().ir_name.clone();
                let tab = program.tables.iter_mut().find(|x| x.name == t).unwrap();
                // A miss counts in the cell after the entries' (docs/p4.md, Counters).
                if c.takes_entry_index(&call.action) {
                    call.args.push(tab.size as u64);
                }
                tab.default_action = call;
            }
            Cmd::ValueSetAdd { name, value } => {
                add_value(c, &mut program, name, value).map_err(|e| at(*ln, e))?;
            }
            _ => {}
        }
    }
    let mut places = Places::default();
    for t in &program.tables {
        for (i, e) in t.entries.iter().enumerate() {
            places.push(&t.name, &e.key, i as u64);
        }
    }
    // Ternary entries are searched in list order: lower priority numbers first (the bmv2
    // convention p4c's STF runner passes on), then file order.
    let mut staged: Vec<StagedEntry> = staged.into_iter().flatten().collect();
    staged.sort_by(|a, b| {
        (&a.0, a.1.unwrap_or(u64::MAX), a.2).cmp(&(&b.0, b.1.unwrap_or(u64::MAX), b.2))
    });
    for (t, _, ln, mut e, handle) in staged {
        let place = places.next(&t);
        if c.takes_entry_index(&e.action.action) {
            e.action.args.push(place);
        }
        places.name(&handle, &t, place).map_err(|e| at(ln, e))?;
        places.push(&t, &e.key, place);
        let tab = &mut program.tables[index[&t]];
        tab.entries.push(e);
        // Found here, at the add's line; the chip would refuse the whole program without one.
        if tab.entries.len() as u64 > tab.size as u64 {
            return Err(at(
                ln,
                format!(
                    "table `{}` is full: it holds {} entries (size {}), this add would be \
                     entry {}",
                    c.tables
                        .iter()
                        .find(|x| x.ir_name == t)
                        .map_or(t.as_str(), |x| x.p4_name.as_str()),
                    tab.size,
                    tab.size,
                    tab.entries.len()
                ),
            ));
        }
    }
    Ok((program, places))
}

/// Adds `value` to the value set `name` of `program` (compiled as `c`).
fn add_value(
    c: &Compiled,
    program: &mut ir::Program,
    name: &str,
    value: &str,
) -> Result<(), String> {
    let Some((ir_name, bits)) = c.value_set(name) else {
        let all: Vec<&str> = c.value_sets.iter().map(|v| v.0.as_str()).collect();
        return Err(format!(
            "no value set `{name}` in the P4 program (its value sets: {})",
            if all.is_empty() {
                "none".to_string()
            } else {
                all.join(", ")
            }
        ));
    };
    let v = key_value(value, *bits, MatchKind::Ternary, false)?;
    let set = program
        .parser
        .as_mut()
        .and_then(|g| g.value_sets.iter_mut().find(|s| &s.name == ir_name))
        .expect("a value set of the program's graph");
    if set.entries.len() == set.size as usize {
        return Err(format!(
            "value set `{ir_name}` is full: its {} parser TCAM rows are reserved when the program loads, and each holds one value",
            set.size
        ));
    }
    set.entries.push(vec![v]);
    Ok(())
}

/// The line of a `check_counter` or `check_register` against the chip's cells now, and
/// whether it held; `Err` is bad input (an unknown name, an index out of range).
fn check_cell(
    c: &Compiled,
    places: &Places,
    chip: &mut Chip,
    ck: &Check,
) -> Result<(String, bool), String> {
    let index = |direct_table: Option<&str>| -> Result<u32, String> {
        match &ck.index {
            CellIndex::Number(n) => Ok(*n),
            CellIndex::Handle(h) => {
                let Some((t, place)) = places.handles.get(h) else {
                    return Err(format!(
                        "no entry was added with handle `{h}` (`add ... = {h}`)"
                    ));
                };
                if direct_table != Some(t.as_str()) {
                    return Err(format!(
                        "entry `{h}` is of table `{t}`, which `{}` does not count",
                        ck.name
                    ));
                }
                Ok(*place as u32)
            }
        }
    };
    let (got, what) = if ck.counter {
        let info = c
            .counter(&ck.name)
            .ok_or_else(|| format!("no counter `{}` in the program", ck.name))?;
        let i = index(info.direct_table.as_deref())?;
        let gress = c.register_gress(&info.register);
        let cell = chip
            .read_register(0, gress, &info.register, i)
            .map_err(|e| format!("counter `{}`: {}", ck.name, e.problem))?;
        let (packets, bytes) = info.split(cell);
        match (ck.packets, packets, bytes) {
            (Some(true) | None, Some(p), None) => (p, "packets"),
            (Some(true), Some(p), Some(_)) => (p, "packets"),
            (Some(false) | None, None, Some(b)) => (b, "bytes"),
            (Some(false), Some(_), Some(b)) => (b, "bytes"),
            (None, Some(_), Some(_)) => {
                return Err(format!(
                    "counter `{}` counts packets and bytes: say which",
                    ck.name
                ))
            }
            (Some(p), _, _) => {
                return Err(format!(
                    "counter `{}` does not count {}",
                    ck.name,
                    if p { "packets" } else { "bytes" }
                ))
            }
            (None, None, None) => unreachable!("a counter counts something"),
        }
    } else {
        let reg = c
            .register(&ck.name)
            .ok_or_else(|| format!("no register `{}` in the program", ck.name))?;
        let i = index(None)?;
        let cell = chip
            .read_register(0, c.register_gress(reg), reg, i)
            .map_err(|e| format!("register `{}`: {}", ck.name, e.problem))?;
        (cell, "value")
    };
    let held = ck.cmp.holds(got, ck.value);
    Ok((
        if held {
            format!("{}: pass ({what} {got})", ck.text)
        } else {
            format!("{}: FAIL: {what} is {got}", ck.text)
        },
        held,
    ))
}

/// Largest frame an STF packet may be: the model's jumbo frame, less the FCS the chip adds.
const MAX_FRAME_BYTES: usize = t2_testbench::host::MAX_FRAME_BYTES as usize - 4;

/// Port speed of the test ports.
const STF_PORT_BPS: u64 = 50_000_000_000;

/// Runs STF file `test` (its text) against compiled program `c`. `Err` is bad input.
/// Reads an STF test against `c` as [`run_stf`] does before it builds the chip: every line
/// parsed, the ports found, the control-plane state before the first packet staged into the
/// program and every later `add` resolved against the program's tables. `Err` is bad input,
/// at its line. (The fuzzer runs this on every input: the chip is too slow to build a
/// million times.)
pub fn read_stf(c: &Compiled, test_name: &str, text: &str) -> Result<(), String> {
    let cmds = parse_stf(test_name, text)?;
    let params = Tofino2Params::default();
    stf_ports(test_name, &cmds, &params)?;
    let first_packet = cmds
        .iter()
        .position(|(_, c)| matches!(c, Cmd::Packet { .. }))
        .unwrap_or(cmds.len());
    stage(c, test_name, &cmds[..first_packet])?;
    for (ln, cmd) in &cmds[first_packet..] {
        if let Cmd::Add {
            table,
            keys,
            action,
            args,
            ..
        } = cmd
        {
            entry(c, table, keys, action, args).map_err(|e| format!("{test_name}:{ln}: {e}"))?;
        }
    }
    Ok(())
}

pub fn run_stf(c: &Compiled, test_name: &str, text: &str) -> Result<StfOutcome, String> {
    let cmds = parse_stf(test_name, text)?;
    let mut params = Tofino2Params::default();
    // A test that sends to or expects from local port 6 of a pipe (the model's
    // recirculation port) uses it as tofino-model does, as a plain port: the chip then has
    // no recirculation ports.
    let names_port_6 = cmds.iter().any(|(_, cmd)| {
        matches!(cmd, Cmd::Packet { port, .. } | Cmd::Expect { port, .. }
            if (*port & 0x7f) as u32 == crate::chip::RECIRCULATION_LOCAL_PORT)
    });
    if names_port_6 {
        params.recirculation_cap_percent = 0;
    }
    let at = |ln: usize, e: String| format!("{test_name}:{ln}: {e}");
    let (ports, specs) = stf_ports(test_name, &cmds, &params)?;
    // Control-plane state before the first packet goes into the program itself.
    let first_packet = cmds
        .iter()
        .position(|(_, c)| matches!(c, Cmd::Packet { .. }))
        .unwrap_or(cmds.len());
    let (program, mut places) = stage(c, test_name, &cmds[..first_packet])?;
    if ports.is_empty() {
        return Err(format!(
            "{test_name}: the test names no port (no `packet`, `expect` or `mirroring_add`): \
             there is nothing to run"
        ));
    }
    let config = ChipConfig {
        params,
        ports: specs,
        routes: Vec::new(),
        program: Some(program),
    };
    let mut chip = Chip::new("chip", &config).map_err(|e| format!("{}: {}", e.what, e.problem))?;
    for (ln, cmd) in &cmds[..first_packet] {
        if let Cmd::MirroringAdd { session, port } = cmd {
            let session_to = crate::MirrorSession {
                port: ports.iter().position(|p| p == port).unwrap(),
                qid: 0,
                truncate_bytes: None,
            };
            chip.set_mirror_session(*session, Some(session_to))
                .map_err(|e| at(*ln, format!("{}: {}", e.what, e.problem)))?;
        }
    }
    // Checks before the first packet see the cells as the program starts them.
    let mut checked: Vec<(usize, String, bool)> = Vec::new();
    for (ln, cmd) in &cmds[..first_packet] {
        if let Cmd::Check(ck) = cmd {
            let (line, held) = check_cell(c, &places, &mut chip, ck).map_err(|e| at(*ln, e))?;
            checked.push((*ln, line, held));
        }
    }
    let mut net = Network::new(Stepping::Jump);
    let chip = net.add(chip);
    let mut probes = Vec::new();
    for i in 0..ports.len() {
        let p = net.add(Probe::new(STF_PORT_BPS, Vec::new()));
        net.link(chip, i, p, 0, 1).map_err(|e| format!("{e:?}"))?;
        probes.push(p);
    }
    let line = LineRate::new(params.clock(), STF_PORT_BPS);
    let mut t: Cycle = 100;
    let drain = |net: &mut Network| {
        while net.next_event().is_some() {
            net.advance();
        }
    };
    // p4c's STF files often state what must come out before the packet that makes it:
    // an expectation waits for the next packet on its port, wherever it stands.
    let mut expects: Vec<Expectation> = Vec::new();
    // (cycle, line) of each `add` after the first packet: an entry the chip refuses when it
    // lands (a full table) is the line's error, not a silent loss.
    let mut added: Vec<(Cycle, usize)> = Vec::new();
    let mut digests_seen = DigestsSeen::default();
    for (ln, cmd) in &cmds[..first_packet] {
        if let Cmd::Expect {
            port,
            nibbles,
            exact_len,
        } = cmd
        {
            expects.push((*ln, *port, nibbles.clone(), *exact_len));
        }
        if matches!(cmd, Cmd::CheckDigest { .. }) {
            return Err(at(
                *ln,
                "`check_digest` before the first packet: no packet has sent a digest yet"
                    .to_string(),
            ));
        }
    }
    for (ln, cmd) in &cmds[first_packet..] {
        match cmd {
            Cmd::Packet { port, bytes } => {
                let idx = ports.iter().position(|p| p == port).unwrap();
                let mut frame = bytes.clone();
                if frame.len() < 60 {
                    frame.resize(60, 0);
                }
                t = t.max(net.now() + 1);
                net.inject(chip, idx, &frame, t).map_err(|e| at(*ln, e))?;
                // The next frame starts after this one's bytes, FCS, preamble and gap.
                t += line.serialization_cycles_ceil(frame.len() as u64 + 4 + 20);
            }
            Cmd::Expect {
                port,
                nibbles,
                exact_len,
            } => expects.push((*ln, *port, nibbles.clone(), *exact_len)),
            Cmd::Wait => {
                drain(&mut net);
            }
            Cmd::Add {
                table,
                keys,
                action,
                args,
                handle,
                ..
            } => {
                drain(&mut net);
                let when = net.now() + 1;
                let (tname, e) = entry(c, table, keys, action, args).map_err(|e| at(*ln, e))?;
                let op = entry_op(c, &mut places, tname, e, handle).map_err(|e| at(*ln, e))?;
                net.node_mut::<Chip>(chip)
                    .schedule(when, op)
                    .map_err(|e| at(*ln, format!("{}: {}", e.what, e.problem)))?;
                added.push((when, *ln));
                net.wake_all(when);
                t = t.max(when + 1);
            }
            Cmd::SetDefault { .. } => {
                return Err(at(
                    *ln,
                    "`setdefault` after the first packet is not supported".to_string(),
                ))
            }
            Cmd::MirroringAdd { .. } => {
                return Err(at(
                    *ln,
                    "`mirroring_add` after the first packet is not supported".to_string(),
                ))
            }
            Cmd::ValueSetAdd { .. } => {
                return Err(at(
                    *ln,
                    "`value_set_add` after the first packet is not supported: the model's \
                     parser graph is fixed once the chip runs (add a value set's values before \
                     the first packet)"
                        .to_string(),
                ))
            }
            Cmd::Check(ck) => {
                // As `wait`: the packets sent so far have left (or been dropped) first.
                drain(&mut net);
                let chip = net.node_mut::<Chip>(chip);
                let (line, held) = check_cell(c, &places, chip, ck).map_err(|e| at(*ln, e))?;
                checked.push((*ln, line, held));
            }
            Cmd::CheckDigest { name, values, text } => {
                drain(&mut net);
                let chip = net.node::<Chip>(chip);
                let (line, held) = digests_seen
                    .check(c, chip, name, values, text)
                    .map_err(|e| at(*ln, e))?;
                checked.push((*ln, line, held));
            }
        }
    }
    drain(&mut net);
    if let Some((cycle, e)) = net.node::<Chip>(chip).control_errors().first() {
        let problem = format!("{}: {}", e.what, e.problem);
        return Err(match added.iter().find(|a| a.0 == *cycle) {
            Some(&(_, ln)) => at(ln, problem),
            None => format!("{test_name}: {problem}"),
        });
    }
    let received: Vec<&[(Cycle, Vec<u8>)]> = probes
        .iter()
        .map(|&p| net.node::<Probe>(p).received())
        .collect();
    let judged = judge_expects(test_name, &ports, &received, &expects);
    let unchecked_digests = digests_seen.unchecked(c, net.node::<Chip>(chip));
    Ok(outcome(
        test_name,
        &ports,
        &received,
        judged,
        expects.len(),
        checked,
        unchecked_digests,
    ))
}

/// The test's lines in file order (each expectation and check), then the packets no
/// expectation took and the digests no check compared, each a failure, then the summary.
fn outcome(
    test_name: &str,
    ports: &[u16],
    received: &[&[(Cycle, Vec<u8>)]],
    judged: Judged,
    n: usize,
    checked: Vec<(usize, String, bool)>,
    unchecked_digests: Vec<String>,
) -> StfOutcome {
    let Judged {
        mut lines,
        failed,
        used,
    } = judged;
    let mut passed = failed == 0;
    let checks = checked.len();
    let checks_failed = checked.iter().filter(|x| !x.2).count();
    passed &= checks_failed == 0;
    lines.extend(
        checked
            .into_iter()
            .map(|(ln, line, _)| (ln, format!("{test_name}:{ln}: {line}"))),
    );
    // One line per expectation and check, in file order.
    lines.sort_by_key(|l| l.0);
    let mut lines: Vec<String> = lines.into_iter().map(|l| l.1).collect();
    let listed = lines.len();
    for (i, got) in received.iter().enumerate() {
        for (cycle, bytes) in got.iter().skip(used[i]) {
            passed = false;
            lines.push(format!(
                "{test_name}: port {}: FAIL: unexpected packet in cycle {cycle}: {}",
                ports[i],
                hex_string(bytes)
            ));
        }
    }
    let unexpected = lines.len() - listed;
    let extra = unchecked_digests;
    passed &= extra.is_empty();
    let unexpected_digests = extra.len();
    lines.extend(extra.into_iter().map(|l| format!("{test_name}: FAIL: {l}")));
    let mut summary = format!(
        "{test_name}: {n} expectations, {} passed, {failed} failed; {unexpected} unexpected packets",
        n - failed
    );
    if checks > 0 {
        summary += &format!(
            "; {checks} checks, {} passed, {checks_failed} failed",
            checks - checks_failed
        );
    }
    if unexpected_digests > 0 {
        summary += &format!("; {unexpected_digests} unexpected digests");
    }
    lines.push(summary);
    StfOutcome { lines, passed }
}

/// Every device port a packet, expectation or mirror session of the test names, in order,
/// and the chip port each one is: a front-panel channel of its pipe, or a port of its pipe's
/// port group 0 (local ports 0-7: CPU and packet-generator ports).
fn stf_ports(
    test_name: &str,
    cmds: &[(usize, Cmd)],
    params: &Tofino2Params,
) -> Result<(Vec<u16>, Vec<PortSpec>), String> {
    let mut ports: Vec<u16> = Vec::new();
    for (_, cmd) in cmds {
        if let Cmd::Packet { port, .. }
        | Cmd::Expect { port, .. }
        | Cmd::MirroringAdd { port, .. } = cmd
        {
            if !ports.contains(port) {
                ports.push(*port);
            }
        }
    }
    ports.sort_unstable();
    let cpm = params.channels_per_mac as u16;
    let local_ports = 8 + params.macs_per_pipe as u16 * cpm;
    let mut specs = Vec::new();
    for &p in &ports {
        let (pipe, local) = (p >> 7, p & 0x7f);
        if pipe as u32 >= params.pipes || local >= local_ports {
            return Err(format!(
                "{test_name}: port {p} is not a device port (pipe in bits 8:7 of 0..{}, local \
                 port in bits 6:0 of 0..{local_ports})",
                params.pipes
            ));
        }
        specs.push(if local < 8 {
            // The CPU, recirculation and packet-generator ports, as tofino-model has them;
            // local port 6 is the model's recirculation port.
            if local as u32 == crate::chip::RECIRCULATION_LOCAL_PORT
                && params.recirculation_bps_per_pipe() > 0
            {
                return Err(format!(
                    "{test_name}: port {p} is pipe {pipe}'s recirculation port (local port {}), \
                     which takes no packet from a test",
                    crate::chip::RECIRCULATION_LOCAL_PORT
                ));
            }
            PortSpec::port_group_0(pipe as u32, local as u32, STF_PORT_BPS)
        } else {
            PortSpec {
                pipe: pipe as u32,
                mac: ((local - 8) / cpm) as u32,
                channel: ((local - 8) % cpm) as u32,
                bps: STF_PORT_BPS,
            }
        });
    }
    Ok((ports, specs))
}

/// The control-plane operation of an `add` after the first packet: a key already in the
/// table gets its entry replaced, keeping its place; a new one takes the table's next place
/// (which a `DirectCounter`'s entry index names), and a handle names it.
fn entry_op(
    c: &Compiled,
    places: &mut Places,
    table: String,
    mut e: ir::Entry,
    handle: &Option<String>,
) -> Result<crate::chip::ControlOp, String> {
    let known = places.place_of(&table, &e.key);
    let place = known.unwrap_or_else(|| places.next(&table));
    if known.is_none() {
        places.push(&table, &e.key, place);
    }
    if c.takes_entry_index(&e.action.action) {
        e.action.args.push(place);
    }
    places.name(handle, &table, place)?;
    Ok(if known.is_some() {
        crate::chip::ControlOp::ModifyEntry {
            pipe: None,
            table,
            entry: e,
        }
    } else {
        crate::chip::ControlOp::AddEntry {
            pipe: None,
            table,
            entry: e,
        }
    })
}

/// An `expect`: its line, the port, the bytes as nibbles (`None` for `*`), and whether the
/// packet must end where they do.
type Expectation = (usize, u16, Vec<Option<u8>>, bool);

/// The expectations matched against what reached each port, in order per port.
struct Judged {
    /// A line per expectation, with its line number.
    lines: Vec<(usize, String)>,
    failed: usize,
    /// Packets each port's expectations used up (the rest are unexpected).
    used: Vec<usize>,
}

/// Matches each `expect` (line, port, nibbles with wildcards, exact length) against the next
/// packet that reached its port (`received[i]` for `ports[i]`).
fn judge_expects(
    test_name: &str,
    ports: &[u16],
    received: &[&[(Cycle, Vec<u8>)]],
    expects: &[Expectation],
) -> Judged {
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut failed = 0usize;
    let mut used = vec![0usize; ports.len()];
    for (ln, port, nibbles, exact) in expects {
        let idx = ports.iter().position(|p| p == port).unwrap();
        let got = received[idx];
        let k = used[idx];
        used[idx] += 1;
        let verdict = match got.get(k) {
            None => Err("no packet arrived".to_string()),
            Some((cycle, bytes)) => {
                let hex: Vec<u8> = bytes.iter().flat_map(|b| [b >> 4, b & 0xf]).collect();
                let ok = hex.len() >= nibbles.len()
                    && (!exact || hex.len() == nibbles.len())
                    && nibbles
                        .iter()
                        .zip(&hex)
                        .all(|(w, h)| w.is_none_or(|w| w == *h));
                if ok {
                    Ok(*cycle)
                } else {
                    Err(format!("got {}", hex_string(bytes)))
                }
            }
        };
        match verdict {
            Ok(cycle) => lines.push((
                *ln,
                format!("{test_name}:{ln}: expect port {port}: pass (arrived in cycle {cycle})"),
            )),
            Err(why) => {
                failed += 1;
                lines.push((
                    *ln,
                    format!("{test_name}:{ln}: expect port {port}: FAIL: {why}"),
                ));
            }
        }
    }
    Judged {
        lines,
        failed,
        used,
    }
}

/// How many of each digest's records the test's `check_digest`s have compared so far.
#[derive(Default)]
struct DigestsSeen {
    checked: Vec<usize>,
}

impl DigestsSeen {
    /// Compares the next record of digest `name` with `values` (every field of the digest,
    /// by name): the line of output and whether it held.
    fn check(
        &mut self,
        c: &Compiled,
        chip: &Chip,
        name: &str,
        values: &[(String, u128)],
        text: &str,
    ) -> Result<(String, bool), String> {
        let Some(k) = c.digest(name) else {
            let all: Vec<&str> = c.program.digests.iter().map(|d| d.name.as_str()).collect();
            return Err(format!(
                "no digest `{name}` in the P4 program (its digests: {})",
                if all.is_empty() {
                    "none".to_string()
                } else {
                    all.join(", ")
                }
            ));
        };
        let decl = &c.program.digests[k];
        let mut want = Vec::new();
        for f in &decl.fields {
            let Some((_, v)) = values.iter().find(|(n, _)| *n == f.name) else {
                return Err(format!(
                    "`{text}` does not give field `{}` of digest `{}`",
                    f.name, decl.name
                ));
            };
            want.push(*v);
        }
        if let Some((n, _)) = values
            .iter()
            .find(|(n, _)| !decl.fields.iter().any(|f| f.name == *n))
        {
            return Err(format!("digest `{}` has no field `{n}`", decl.name));
        }
        if self.checked.len() < c.program.digests.len() {
            self.checked.resize(c.program.digests.len(), 0);
        }
        let seen = self.checked[k];
        self.checked[k] += 1;
        let got = chip
            .digests()
            .iter()
            .filter(|r| r.digest as usize == k)
            .nth(seen);
        Ok(match got {
            None => (
                format!("{text}: FAIL: no digest `{}` was sent", decl.name),
                false,
            ),
            Some(r) if r.values.iter().map(|&v| v as u128).eq(want.iter().copied()) => {
                (format!("{text}: pass (sent in cycle {})", r.cycle), true)
            }
            Some(r) => (
                format!("{text}: FAIL: got {}", digest_text(decl, &r.values)),
                false,
            ),
        })
    }

    /// The digests the chip recorded that no `check_digest` compared, as lines.
    fn unchecked(&self, c: &Compiled, chip: &Chip) -> Vec<String> {
        let mut at = vec![0usize; c.program.digests.len()];
        let mut out = Vec::new();
        for r in chip.digests() {
            let k = r.digest as usize;
            at[k] += 1;
            if at[k] > self.checked.get(k).copied().unwrap_or(0) {
                let decl = &c.program.digests[k];
                out.push(format!(
                    "unexpected digest in cycle {}: {} {}",
                    r.cycle,
                    decl.name,
                    digest_text(decl, &r.values)
                ));
            }
        }
        out
    }
}

/// A digest's values as `FIELD:VALUE ...` (hexadecimal).
fn digest_text(decl: &ir::Digest, values: &[u64]) -> String {
    decl.fields
        .iter()
        .zip(values)
        .map(|(f, v)| format!("{}:{v:#x}", f.name))
        .collect::<Vec<_>>()
        .join(" ")
}

fn hex_string(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A P4 program with the entries of a control-plane file: `add`, `setdefault` and `value_set_add` lines in
/// the STF format (`run --p4 FILE.p4 --entries FILE`); other commands are bad input.
pub fn with_entries(c: &Compiled, shown: &str, text: &str) -> Result<ir::Program, String> {
    let cmds = parse_stf(shown, text)?;
    if let Some((ln, _)) = cmds.iter().find(|(_, c)| {
        !matches!(
            c,
            Cmd::Add { .. } | Cmd::SetDefault { .. } | Cmd::ValueSetAdd { .. }
        )
    }) {
        return Err(format!(
            "{shown}:{ln}: an entries file holds `add`, `setdefault` and `value_set_add` lines only"
        ));
    }
    stage(c, shown, &cmds).map(|p| p.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_space_of_more_than_one_byte_before_an_action_is_no_panic() {
        let (head, action, args) = split_action("t k:1 a\u{85}b(x:1)").unwrap();
        assert_eq!((head.as_str(), action.as_str()), ("t k:1 a\u{85}", "b"));
        assert_eq!(args, vec![(Some("x".to_string()), "1".to_string())]);
    }

    #[test]
    fn an_entries_file_fills_a_value_set() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/p4/value_set_tags.p4");
        let c = load(&path, &[], &[]).unwrap();
        let p = with_entries(
            &c,
            "e",
            "value_set_add tag_types 0x8100\nvalue_set_add tag_types 0x88a0&&&0xfff0\n",
        )
        .unwrap();
        let set = &p.parser.as_ref().unwrap().value_sets[0];
        assert_eq!(
            set.entries,
            [
                vec![KeyValue {
                    value: 0x8100,
                    mask: Some(0xffff)
                }],
                vec![KeyValue {
                    value: 0x88a0,
                    mask: Some(0xfff0)
                }]
            ]
        );
    }

    #[test]
    fn stf_lines_parse() {
        let cmds = parse_stf(
            "t.stf",
            "# c\nadd Ingress.t 3 hdr.x:0x0a** Ingress.a(port:8, q:1)\nsetdefault t b()\n\
             packet 8 0011 22\nexpect 9 00** $\nwait\n",
        )
        .unwrap();
        assert_eq!(
            cmds[0].1,
            Cmd::Add {
                table: "Ingress.t".into(),
                priority: Some(3),
                keys: vec![("hdr.x".into(), "0x0a**".into())],
                action: "Ingress.a".into(),
                args: vec![
                    (Some("port".into()), "8".into()),
                    (Some("q".into()), "1".into())
                ],
                handle: None,
            }
        );
        assert_eq!(
            cmds[2].1,
            Cmd::Packet {
                port: 8,
                bytes: vec![0, 0x11, 0x22]
            }
        );
        assert_eq!(
            cmds[3].1,
            Cmd::Expect {
                port: 9,
                nibbles: vec![Some(0), Some(0), None, None],
                exact_len: true
            }
        );
        assert_eq!(
            parse_stf("t.stf", "mirroring_add 5 24\n").unwrap()[0].1,
            Cmd::MirroringAdd {
                session: 5,
                port: 24
            }
        );
        assert_eq!(
            parse_stf("t.stf", "\ncheck_counter Ingress.c($h) packets  <= 3\n").unwrap()[0].1,
            Cmd::Check(Check {
                counter: true,
                name: "Ingress.c".into(),
                index: CellIndex::Handle("h".into()),
                packets: Some(true),
                cmp: ir::Cmp::Le,
                op: "<=".into(),
                value: 3,
                text: "check_counter Ingress.c($h) packets <= 3".into(),
            })
        );
        assert_eq!(
            parse_stf("t.stf", "check_register r(0x10) != 0b11\n").unwrap()[0].1,
            Cmd::Check(Check {
                counter: false,
                name: "r".into(),
                index: CellIndex::Number(16),
                packets: None,
                cmp: ir::Cmp::Ne,
                op: "!=".into(),
                value: 3,
                text: "check_register r(0x10) != 0b11".into(),
            })
        );
        assert_eq!(
            parse_stf("t.stf", "add t k:1 a() = h1\n").unwrap()[0].1,
            Cmd::Add {
                table: "t".into(),
                priority: None,
                keys: vec![("k".into(), "1".into())],
                action: "a".into(),
                args: vec![],
                handle: Some("h1".into()),
            }
        );
        assert_eq!(
            parse_stf("t.stf", "\ncheck_register r(1) packets == 3\n").unwrap_err(),
            "t.stf:2: expected `check_register NAME(INDEX) OP VALUE`"
        );
        assert_eq!(
            parse_stf("t.stf", "check_counter c(1) ~ 3\n").unwrap_err(),
            "t.stf:1: `~` is not a comparison (==, =, !=, <, <=, >, >=)"
        );
        // `=` is equality, as bf-p4c's STF files write it.
        let cmds = parse_stf("t.stf", "check_counter c(1) packets = 3\n").unwrap();
        assert!(
            matches!(&cmds[..], [(1, Cmd::Check(c))] if c.cmp == ir::Cmp::Eq && c.value == 3),
            "{cmds:?}"
        );
        assert_eq!(
            parse_stf("t.stf", "\nregister_write r(1) 3\n").unwrap_err(),
            "t.stf:2: STF command `register_write` is not supported (add, setdefault, packet, \
             expect, wait, mirroring_add, check_counter, check_register, check_digest, \
             value_set_add)"
        );
    }

    #[test]
    fn stack_indices_name_the_unrolled_headers() {
        assert_eq!(stack_index_unrolled("hdr.vlan[1].vid"), "hdr.vlan_1.vid");
        assert_eq!(stack_index_unrolled("hdr.vlan$0.vid"), "hdr.vlan_0.vid");
        assert_eq!(stack_index_unrolled("data.$valid"), "data.$valid");
    }

    #[test]
    fn key_values() {
        let t = MatchKind::Ternary;
        assert_eq!(
            key_value("0x0a**", 16, t, false).unwrap(),
            KeyValue {
                value: 0x0a00,
                mask: Some(0xff00)
            }
        );
        assert_eq!(
            key_value(
                "10.0.0.0/8".replace("10.0.0.0", "0x0a000000").as_str(),
                32,
                MatchKind::Lpm,
                true
            )
            .unwrap(),
            KeyValue {
                value: 0x0a00_0000,
                mask: Some(0xff00_0000)
            }
        );
        assert!(key_value("0x1*", 8, MatchKind::Exact, true).is_err());
        assert!(key_value("256", 8, MatchKind::Exact, true).is_err());
    }
}

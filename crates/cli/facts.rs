//! The facts an attack writes at its stream's head for every page made
//! from it: the command as typed (header values hidden), the load asked
//! for and the first targets.

use barrage_attack::Targets;

use barrage_flags::AttackArgs;

/// The command as typed, for a page: the program's name without its
/// path, words quoted for a shell where needed, header values hidden.
pub fn command_line() -> String {
    // Header values (credentials, often) are not kept: their names are.
    let mut after_header = false;
    let command: Vec<String> = std::env::args()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                // The program's name, not where it lies on this machine.
                return std::path::Path::new(&w)
                    .file_name()
                    .map_or(w.clone(), |n| n.to_string_lossy().into_owned());
            }
            let flag = w.trim_start_matches('-');
            let redact = after_header || flag.starts_with("header=");
            after_header = w.starts_with('-') && flag == "header";
            if redact {
                let (head, _) = w.split_once(':').unwrap_or((&w, ""));
                format!("{head}: ***")
            } else {
                w
            }
        })
        .collect::<Vec<String>>()
        .into_iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,%+".contains(c))
            {
                w
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect();
    barrage_model::words::cut(&command.join(" "), 1000, false)
}

/// The run's facts for the stream's head: the command as typed, barrage's
/// version, the load asked for, and the first targets (and how many).
pub fn run_facts(a: &AttackArgs, targets: &Targets) -> Vec<(&'static str, String)> {
    let load = if let Some(s) = &a.stages {
        format!("stages {s}")
    } else if let Some(m) = &a.mix {
        format!("mix {m}")
    } else if a.rate == barrage_model::Rate::Max {
        format!("{} workers, closed model", a.max_workers.unwrap_or(1))
    } else {
        format!("rate {}", a.rate)
    };
    let urls: Vec<String> = match targets {
        Targets::Fixed(t) => t.iter().map(|t| t.url_text.to_string()).collect(),
        Targets::Groups(g) => g
            .iter()
            .flat_map(|g| g.targets.iter().map(|t| t.url_text.to_string()))
            .collect(),
        Targets::Flow(plan) => plan
            .steps
            .iter()
            .map(|s| s.prepared.url_text.to_string())
            .collect(),
        Targets::Lazy(_) => Vec::new(),
    };
    let mut distinct: Vec<&String> = Vec::new();
    for u in &urls {
        if !distinct.contains(&u) {
            distinct.push(u);
        }
    }
    let mut shown: Vec<String> = distinct.iter().take(3).map(|u| u.to_string()).collect();
    if distinct.len() > 3 {
        shown.push(format!("and {} more", distinct.len() - 3));
    }
    let mut facts = vec![
        ("command", command_line()),
        ("version", env!("CARGO_PKG_VERSION").to_string()),
        ("load", load),
    ];
    if !shown.is_empty() {
        facts.push(("targets", shown.join(", ")));
    }
    facts
}

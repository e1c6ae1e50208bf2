//! `barrage compare BASE NEW` (or `a1 a2 -- b1 b2`): reads each file as
//! one run of its side, compares the sides, writes text, JSON or HTML,
//! and exits 3 when a `-fail-on` condition holds. A damaged input is
//! compared up to its last complete record, then said, and exits 2.

use barrage_metrics::Options;
use barrage_report::compare::{self, Side, Sides, ROUNDS};

use crate::{
    failed::{Failed, Outcome},
    inputs, output,
};
use barrage_flags::CompareArgs;

pub fn run(args: CompareArgs) -> Outcome {
    let (base, new) = args.sides().map_err(Failed::usage)?;
    let options = Options {
        latency: args.latency,
        success: args.success.clone(),
        limits: args.limits.clone(),
        ..Options::default()
    };
    let mut all = Sides::new(args.by, options);
    let mut damaged = Vec::new();
    let mut runs = [
        barrage_plot::run::RunFacts::new(),
        barrage_plot::run::RunFacts::new(),
    ];
    for (side, files) in [(Side::Base, &base), (Side::New, &new)] {
        let run = &mut runs[usize::from(side == Side::New)];
        run.inputs(files);
        for file in files {
            all.start_named_run(side, file);
            let merge = inputs::open(std::slice::from_ref(file), false)?;
            let mut records = inputs::Records::new(merge, args.latency);
            while let Some((hit, lacks)) = records.next_record() {
                all.add(side, hit, lacks);
                run.add(hit);
            }
            records.tell(run);
            all.add_run_facts(side, &records.merge.meta(), &records.merge.audits());
            inputs::finish_records(&records, None, "compare")?;
            if let Err(f) = inputs::finish(&records.merge) {
                damaged.push(f);
            }
        }
    }
    for (side, files) in [(Side::Base, &base), (Side::New, &new)] {
        if all.requests(side) == 0 {
            return Err(Failed::usage(format!(
                "no records on the {} side ({})",
                if side == Side::Base { "base" } else { "new" },
                files.join(" ")
            )));
        }
    }
    let c = all.compare(args.seed, ROUNDS);
    for (side, keys) in [("base", &c.only_base), ("new", &c.only_new)] {
        for k in keys {
            eprintln!(
                "barrage compare: {} {k:?} is only in {side}: not compared",
                c.by.map_or("", |b| b.name())
            );
        }
    }
    output::write_to(&args.output, |out| match args.kind.as_str() {
        "json" => compare::compare_json(&c, out),
        "html" => {
            let header = barrage_plot::run::side_by_side(&runs[0], &runs[1]);
            barrage_report::html::compare_page(&c, &all, &header, out)
        }
        _ => compare::compare_text(&c, out),
    })?;
    if let Some(f) = damaged.into_iter().next() {
        return Err(f);
    }
    Failed::fail_on(args.fail_on.map(|g| g.check(&c)).unwrap_or_default())
}

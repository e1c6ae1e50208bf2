//! Reading the files the attack's flags name: whole and bounded, and the
//! `-header`/`-body` defaults every target starts from.

use barrage_targets::Defaults;

use crate::{failed::Failed, flags::AttackArgs};

/// The file `flag` names, read whole up to `limit` bytes: a file that
/// cannot be read is exit 1, one over the limit (or a device without
/// end) exit 2.
pub(crate) fn bounded(flag: &str, path: &str, limit: u64) -> Result<Vec<u8>, Failed> {
    barrage_targets::read_bounded(path, limit).map_err(|e| match e {
        barrage_targets::Unread::Io(e) => Failed::io(format!("{flag} {path}: {e}")),
        over => Failed::usage(format!("{flag} {path}: {over}")),
    })
}

/// `-header` and `-body`, for every target that has none of its own.
pub(crate) fn defaults(a: &AttackArgs) -> Result<Defaults, Failed> {
    let body = match (&a.body, &a.body_text) {
        (_, Some(text)) => bytes::Bytes::from(text.clone().into_bytes()),
        (None, None) => bytes::Bytes::new(),
        (Some(path), None) => {
            bounded("-body", &path.to_string_lossy(), barrage_targets::MAX_BODY)?.into()
        }
    };
    Ok(Defaults {
        headers: a.headers.clone(),
        body,
    })
}

use bytes::Bytes;

/// One request to send: what a line (or block) of a targets file describes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// HTTP method, upper case as written (`GET`, `POST`, `PURGE`).
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Headers in order, names with their case kept; repeats allowed.
    pub headers: Vec<(String, String)>,
    /// Request body (may be empty).
    pub body: Bytes,
}

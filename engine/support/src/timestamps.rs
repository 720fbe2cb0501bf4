//! Times as the wire's strings. A leaf: it uses nothing of the engine, so any part may use it.

/// Now, in Unix milliseconds (0 before 1970, `i64::MAX` past its range).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Unix seconds as an RFC 3339 UTC timestamp, `YYYY-MM-DDThh:mm:ssZ` (the form the wire's
/// string timestamps take); `None` when out of range.
pub fn rfc3339(seconds: i64) -> Option<String> {
    let at = time::OffsetDateTime::from_unix_timestamp(seconds).ok()?;
    Some(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(
            rfc3339(1_767_323_045).as_deref(),
            Some("2026-01-02T03:04:05Z")
        );
        assert_eq!(rfc3339(i64::MAX), None);
    }
}

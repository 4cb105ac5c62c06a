//! API errors in one line for logs and events: the status code, reason and message of an API
//! answer (kube's own text for these carries a Debug dump of the whole `Status`), and kube's
//! text for everything else, with the innermost cause when kube's text lacks it (its text for a
//! refused connection is only `client error (Connect)`).

use crate::controller::client::stack::{TooLarge, in_chain};
use kube::core::Status;
use kube::runtime::watcher;

/// kube's reason for an error answer whose body is not a `Status` (its body is the message).
const NOT_A_STATUS: &str = "Failed to parse error data";

fn status(s: &Status) -> String {
    if s.reason == NOT_A_STATUS {
        let phrase = http::StatusCode::from_u16(s.code)
            .ok()
            .and_then(|c| c.canonical_reason())
            .map_or(String::new(), |r| format!(" {r}"));
        return format!(
            "{}{phrase}: {}, not an API server's answer",
            s.code,
            describe_body(s.message.as_bytes())
        );
    }
    let message = s.message.trim();
    if s.code == 0 && s.reason.is_empty() && message.is_empty() {
        return "an error answer that says nothing (no code, reason or message)".into();
    }
    let code = if s.code == 0 {
        "no code".to_string()
    } else {
        s.code.to_string()
    };
    let reason = if s.reason.is_empty() {
        String::new()
    } else {
        format!(" {}", s.reason)
    };
    let message = if message.is_empty() {
        "(no message)"
    } else {
        message
    };
    format!("{code}{reason}: {message}")
}

/// `409 Conflict: the object has been modified...`; for an answer over its byte cap, the cap's
/// text (which names the kind and the cap); else kube's text, followed by the innermost cause
/// (`Connection refused (os error 111)`) when the text lacks it.
pub fn brief(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => status(s),
        kube::Error::SerdeError(e) if e.is_data() => {
            format!("the answer's JSON is not the object asked for ({e})")
        }
        kube::Error::SerdeError(e) => {
            format!("the answer is not JSON ({e}), as a proxy's or a login page's")
        }
        kube::Error::FromUtf8(_) => "the answer is not UTF-8 text, so not an API server's".into(),
        other => match in_chain::<TooLarge>(other) {
            Some(too_large) => too_large.to_string(),
            None => with_cause(other),
        },
    }
}

/// What a body that is not an API server's looks like: its start, made visible.
fn describe_body(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]);
    let text = text.trim();
    if text.is_empty() {
        return "an empty body".into();
    }
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        return "an HTML page (a login or proxy page?)".into();
    }
    let mut start: String = text
        .chars()
        .take(60)
        .flat_map(char::escape_default)
        .collect();
    if text.chars().nth(60).is_some() {
        start.push('…');
    }
    format!("a body starting \"{start}\"")
}

fn with_cause(e: &dyn std::error::Error) -> String {
    let text = e.to_string();
    let mut innermost = None;
    let mut source = e.source();
    while let Some(cause) = source {
        innermost = Some(cause);
        source = cause.source();
    }
    match innermost.map(|c| c.to_string()) {
        Some(cause) if !cause.is_empty() && !text.contains(&cause) => format!("{text}: {cause}"),
        _ => text,
    }
}

/// As [`brief`], for the watcher's errors.
pub fn brief_watch(e: &watcher::Error) -> String {
    match e {
        watcher::Error::InitialListFailed(e) => format!("listing: {}", brief(e)),
        watcher::Error::WatchStartFailed(e) => format!("starting the watch: {}", brief(e)),
        watcher::Error::WatchError(s) => format!("the watch answered {}", status(s)),
        watcher::Error::WatchFailed(e) => format!("the watch failed: {}", brief(e)),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::client::brief::*;

    #[test]
    fn an_api_answer_is_one_line_without_a_debug_dump() {
        let e = kube::Error::Api(
            Status::failure("the object has been modified", "Conflict")
                .with_code(409)
                .boxed(),
        );
        assert_eq!(brief(&e), "409 Conflict: the object has been modified");
        let w = watcher::Error::InitialListFailed(e);
        assert_eq!(
            brief_watch(&w),
            "listing: 409 Conflict: the object has been modified"
        );
    }

    #[test]
    fn an_answer_without_code_or_message_says_so() {
        let empty = kube::Error::Api(Status::failure("", "").boxed());
        assert_eq!(
            brief_watch(&watcher::Error::WatchFailed(empty)),
            "the watch failed: an error answer that says nothing (no code, reason or message)"
        );
        let no_message = kube::Error::Api(Status::failure("", "Forbidden").with_code(403).boxed());
        assert_eq!(brief(&no_message), "403 Forbidden: (no message)");
    }

    #[derive(Debug, thiserror::Error)]
    #[error("client error (Connect)")]
    struct Connect(#[source] std::io::Error);

    #[test]
    fn an_error_without_an_answer_names_its_innermost_cause() {
        let refused =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        let e = kube::Error::Service(Box::new(Connect(refused)));
        assert_eq!(
            brief(&e),
            "ServiceError: client error (Connect): Connection refused"
        );
    }

    #[test]
    fn an_answer_over_its_cap_is_told_by_the_cap_wherever_kube_wrapped_it() {
        let too_large = || TooLarge {
            answer: crate::controller::client::stack::Answer::WatchEvent,
            resource: "seeds".into(),
            cap: crate::controller::client::stack::WATCH_EVENT_BYTES,
        };
        let says = "a watch event of seeds holds more than 8 MiB, the cap on one watch event; the \
                    rest of the answer is not read";
        let service = kube::Error::Service(Box::new(too_large()));
        assert_eq!(brief(&service), says);
        // a watch's body error reaches the watcher inside an io::Error
        let read = kube::Error::ReadEvents(std::io::Error::other(kube::Error::Service(Box::new(
            too_large(),
        ))));
        let w = watcher::Error::WatchFailed(read);
        assert_eq!(brief_watch(&w), format!("the watch failed: {says}"));
    }
}

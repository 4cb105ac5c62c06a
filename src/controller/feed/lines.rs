//! A watch read as its bytes arrive: the answer is split into lines where they end (one event a
//! line), and each line is decoded where it lies in the bytes received, without being copied
//! into a string and checked for UTF-8 whole first. How a line becomes its event is the
//! object's own choice ([`Wire`]): a shoot with a seed is decoded in one pass.
//!
//! Errors are those of kube's own watch: an error answer is the API's `Status`, a line that is
//! not an event is the `Status` it holds or a decoding error, and a connection cut within a
//! chunk ends the watch as the server ending it would.

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use futures::stream::BoxStream;
use http::header::{ACCEPT_ENCODING, HeaderValue};
use http_body_util::BodyExt;
use kube::api::{Api, WatchEvent, WatchParams};
use kube::client::Body;
use kube::core::{Request, Status};
use serde::de::DeserializeOwned;

/// How an object is read off the wire: from one line of a watch, or from one item of a list
/// page (see `list_page`).
pub trait Wire: Sized + DeserializeOwned {
    /// The event the line holds; its error is serde_json's.
    fn read_event(line: &[u8]) -> serde_json::Result<WatchEvent<Self>> {
        serde_json::from_slice(line)
    }

    /// The object one item of a list page holds.
    fn read_item(item: &[u8]) -> serde_json::Result<Self> {
        serde_json::from_slice(item)
    }
}

/// The events of a watch of `api`'s kind from `version`, each decoded as its line arrives.
pub async fn watch<I: Wire + kube::Resource + Clone + Send + 'static>(
    api: &Api<I>,
    params: &WatchParams,
    version: &str,
) -> kube::Result<BoxStream<'static, kube::Result<WatchEvent<I>>>> {
    let mut request = Request::new(api.resource_url())
        .watch(params, version)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("watch");
    // one event a line, as sent: a compressed stream would need the whole answer decoded
    request
        .headers_mut()
        .entry(ACCEPT_ENCODING)
        .or_insert(HeaderValue::from_static("identity"));
    let lines = Lines {
        body: send(api, request).await?,
        frame: Bytes::new(),
        partial: BytesMut::new(),
        ended: false,
    };
    Ok(futures::stream::unfold(lines, |mut lines| async move {
        loop {
            match lines.next_line().await? {
                Ok(line) => match I::read_event(&line) {
                    Ok(event) => return Some((Ok(event), lines)),
                    // a line cut short by the end of the answer, or a blank one
                    Err(e) if e.is_eof() => continue,
                    Err(e) => {
                        let error = match serde_json::from_slice::<Status>(&line) {
                            Ok(status) => kube::Error::Api(status.boxed()),
                            Err(_) => kube::Error::SerdeError(e),
                        };
                        return Some((Err(error), lines));
                    }
                },
                Err(e) => return Some((Err(e), lines)),
            }
        }
    })
    .boxed())
}

/// Sends a request about `api`'s kind through the client's stack: the body of the answer as it
/// arrives, or the API's `Status` of an error answer.
pub(in crate::controller) async fn send<I: kube::Resource + Clone>(
    api: &Api<I>,
    request: http::Request<Vec<u8>>,
) -> kube::Result<Body> {
    let client: kube::Client = api.clone().into();
    let answer = client.send(request.map(Body::from)).await?;
    let status = answer.status();
    if status.is_client_error() || status.is_server_error() {
        let body = answer.into_body().collect().await?.to_bytes();
        return Err(kube::Error::Api(
            error_status(status.as_u16(), &body).boxed(),
        ));
    }
    Ok(answer.into_body())
}

/// The `Status` of an error answer, or one made of its text when it holds none (a proxy's page).
fn error_status(code: u16, body: &[u8]) -> Status {
    serde_json::from_slice::<Status>(body).unwrap_or_else(|_| {
        let text = String::from_utf8_lossy(body);
        Status::failure(text.trim(), "Failed to parse error data").with_code(code)
    })
}

/// The lines of an answer: whole ones are sliced from the frame they arrived in; a line that
/// spans frames is gathered in `partial`.
struct Lines<B> {
    body: B,
    /// the rest of the last frame received
    frame: Bytes,
    /// the start of a line whose end has not arrived
    partial: BytesMut,
    /// the answer ended or failed: nothing more is read
    ended: bool,
}

impl<B> Lines<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    /// The next line (its newline included), or the failure that ends the answer; `None` at its
    /// end.
    async fn next_line(&mut self) -> Option<kube::Result<Bytes>> {
        loop {
            if let Some(end) = memchr::memchr(b'\n', &self.frame) {
                let piece = self.frame.split_to(end + 1);
                if self.partial.is_empty() {
                    return Some(Ok(piece));
                }
                self.partial.extend_from_slice(&piece);
                return Some(Ok(self.partial.split().freeze()));
            }
            self.partial.extend_from_slice(&self.frame);
            self.frame.clear();
            if self.ended {
                return None;
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.frame = data;
                    }
                }
                Some(Err(e)) => {
                    self.ended = true;
                    if cut_within_chunk(&e) {
                        // as the server ending the watch: it is resumed from its last version
                        tracing::debug!(error = %e, "the watch's connection ended within a chunk");
                        return None;
                    }
                    return Some(Err(kube::Error::ReadEvents(std::io::Error::other(e))));
                }
                None => {
                    self.ended = true;
                    // the rest, if any, is a last line without its newline
                    if !self.partial.is_empty() {
                        return Some(Ok(self.partial.split().freeze()));
                    }
                    return None;
                }
            }
        }
    }
}

/// Whether a failure while reading is the connection cut within a chunk (an unexpected end of
/// the stream, however deep the TLS and HTTP layers nest it).
fn cut_within_chunk(e: &(dyn std::error::Error + 'static)) -> bool {
    if e.to_string().contains("unexpected EOF during chunk") {
        return true;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = e.source();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::UnexpectedEof
        {
            return true;
        }
        source = s.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::controller::feed::lines::*;

    fn lines_of(frames: &[&str]) -> Vec<String> {
        let frames: Vec<Result<http_body::Frame<Bytes>, std::io::Error>> = frames
            .iter()
            .map(|f| Ok(http_body::Frame::data(Bytes::copy_from_slice(f.as_bytes()))))
            .collect();
        let body = http_body_util::StreamBody::new(futures::stream::iter(frames));
        let mut lines = Lines {
            body,
            frame: Bytes::new(),
            partial: BytesMut::new(),
            ended: false,
        };
        futures::executor::block_on(async {
            let mut out = Vec::new();
            while let Some(line) = lines.next_line().await {
                out.push(String::from_utf8(line.unwrap().to_vec()).unwrap());
            }
            out
        })
    }

    #[test]
    fn lines_are_cut_where_they_end_whatever_the_frames() {
        assert_eq!(lines_of(&["a\nb\n"]), ["a\n", "b\n"]);
        assert_eq!(lines_of(&["a", "b\nc", "", "d\n"]), ["ab\n", "cd\n"]);
        assert_eq!(lines_of(&["a\n", "b"]), ["a\n", "b"]);
        assert_eq!(lines_of(&["\n\n"]), ["\n", "\n"]);
        assert!(lines_of(&[]).is_empty());
    }

    #[test]
    fn an_error_answer_without_a_status_keeps_its_code_and_text() {
        let status = error_status(502, b"  <html>bad gateway</html>\n");
        assert_eq!(status.code, 502);
        assert_eq!(status.message, "<html>bad gateway</html>");
        let json = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old","reason":"Expired","code":410}"#;
        assert_eq!(error_status(500, json).code, 410);
    }
}

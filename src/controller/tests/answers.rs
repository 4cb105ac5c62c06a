//! Answers that are not the API server's (an HTML page from a proxy, garbage, an object over
//! its cap) are named in words an operator reads, and a failed read is never "outcome unknown":
//! nothing was written.

use crate::controller::tests::scenario::*;
use crate::controller::tests::*;
use http::Response;
use kube::client::Body;

/// An answer with `code`, `content_type` and `body`, as a proxy sends it.
fn raw(code: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", content_type)
        .body(Body::from(body.into()))
        .unwrap()
}

const LOGIN_PAGE: &str = "<!DOCTYPE html><html><body>Sign in</body></html>";

#[tokio::test]
async fn a_read_answered_with_an_html_page_or_garbage_says_so_and_wrote_nothing() {
    for (body, want) in [
        (
            LOGIN_PAGE.as_bytes().to_vec(),
            "reading shoot: the answer is not JSON (expected value at line 1 column 1), \
             as a proxy's or a login page's; nothing was written",
        ),
        (
            b"\x00\xff garbage".to_vec(),
            "reading shoot: the answer is not UTF-8 text, so not an API server's; nothing was \
             written",
        ),
        (
            b"[1]".to_vec(),
            "reading shoot: the answer's JSON is not the object asked for (invalid type: \
             sequence, expected struct DynamicObject at line 1 column 0); nothing was written",
        ),
    ] {
        let (client, mut api) = mock_api();
        let task = spawn_bind(client, BindingMode::Binding);
        let get = api.next().await;
        get.respond.send_response(raw(200, "text/html", body));
        let err = task.await.unwrap().unwrap_err();
        assert!(!err.outcome_unknown(), "{err:?}");
        assert_eq!(err.to_string(), want);
    }
}

#[tokio::test]
async fn an_error_answer_that_is_an_html_page_is_named_with_its_status() {
    let (client, mut api) = mock_api();
    let task = spawn_bind(client, BindingMode::Binding);
    api.returns_shoot("5", None).await;
    let put = api.next().await;
    put.respond.send_response(raw(
        502,
        "text/html",
        LOGIN_PAGE.replace("Sign in", "Bad gateway"),
    ));
    let err = task.await.unwrap().unwrap_err();
    // A 5xx to a write: the write may have been committed.
    assert!(err.outcome_unknown(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "updating shoots/binding: outcome unknown: 502 Bad Gateway: an HTML page (a login or proxy page?), \
         not an API server's answer"
    );
}

#[tokio::test]
async fn a_read_over_its_cap_is_named_by_its_cap_not_as_an_unknown_outcome() {
    let (client, mut api) = mock_api();
    let task = spawn_bind(client, BindingMode::Binding);
    let get = api.next().await;
    let mut shoot = server_shoot("5", None);
    shoot["metadata"]["annotations"] =
        serde_json::json!({"x": "y".repeat(OBJECT_BYTES as usize + 1)});
    get.reply(shoot);
    let err = task.await.unwrap().unwrap_err();
    assert!(!err.outcome_unknown(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "reading shoot: the answer about one object of shoots holds more than 8 MiB, the cap on \
         one object; the rest of the answer is not read; nothing was written"
    );
}

#[tokio::test]
async fn plan_applys_lease_read_over_its_cap_is_named_by_its_cap_not_as_an_unknown_outcome() {
    let (connection, mut api) = mock_api();
    let client = connection.client();
    let task = tokio::spawn(async move {
        let lease = crate::apply::cluster::LeaseRef {
            namespace: "garden".into(),
            name: "gardener-scheduler-plan-apply".into(),
            holder: "me".into(),
            duration: Duration::from_secs(60),
        };
        crate::apply::cluster::hold(&client, &lease, false, REQUEST_TIMEOUT).await
    });
    let get = api.next().await;
    assert_eq!(get.method, "GET");
    get.reply(serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "x", "annotations": {"x": "y".repeat(OBJECT_BYTES as usize + 1)}}
    }));
    let err = task.await.unwrap().unwrap_err().to_string();
    assert_eq!(
        err,
        "reading the lease: the answer about one object of leases holds more than 8 MiB, the cap \
         on one object; the rest of the answer is not read; nothing was written"
    );
}

//! Several questions at once (`toolhost:tool/ask`'s `ask-all`, contract
//! 0.2.2) through the Rust API's [`Asker`]: each question's grant, its
//! key, how many a call may ask, answers of the wrong kind or too big, and
//! roots a client names, hostile ones included. Over MCP 2026-07-28 (one
//! round, answers given in advance, some answered on a retry):
//! tests/all/mcp_2026/rounds.rs and the conformance suite.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::BoxFuture;
use serde_json::{Value, json};

use common::live;
use toolhost::ask::{
    Answer, AskError, Asker, ElicitAnswer, Elicitation, KeyedQuestion, Root, RootsRequest,
    Sampling, SamplingResult,
};
use toolhost::prompts::Role;

const GRANTED: &str = r#"
[tools.ask_all]
ask = ["user", "model", "roots"]
"#;

/// Answers every question: the user with a name, the model with an echo,
/// the client with `roots`; `wrong_kind` answers each with roots instead.
/// Counts what it is asked and how often it is called.
#[derive(Default)]
struct Answers {
    roots: Vec<Root>,
    wrong_kind: bool,
    /// Never answers.
    silent: bool,
    questions: AtomicUsize,
    rounds: AtomicUsize,
}

impl Answers {
    fn with_roots(roots: Vec<Root>) -> Arc<Self> {
        Arc::new(Self {
            roots,
            ..Self::default()
        })
    }
}

impl Asker for Answers {
    fn elicit<'a>(&'a self, _: &'a Elicitation) -> BoxFuture<'a, Result<ElicitAnswer, AskError>> {
        Box::pin(async move {
            let content = json!({"name": "Ada"});
            Ok(ElicitAnswer::Accept(
                content.as_object().cloned().unwrap_or_default(),
            ))
        })
    }

    fn sample<'a>(&'a self, q: &'a Sampling) -> BoxFuture<'a, Result<SamplingResult, AskError>> {
        Box::pin(async move {
            Ok(SamplingResult {
                role: Role::Assistant,
                content: q.messages[0].content.clone(),
                model: "echo".into(),
                stop_reason: None,
            })
        })
    }

    fn roots<'a>(&'a self, _: &'a RootsRequest) -> BoxFuture<'a, Result<Vec<Root>, AskError>> {
        Box::pin(async move { Ok(self.roots.clone()) })
    }

    fn ask_all<'a>(
        &'a self,
        questions: &'a [KeyedQuestion],
    ) -> BoxFuture<'a, Result<Vec<Answer>, AskError>> {
        Box::pin(async move {
            self.rounds.fetch_add(1, Ordering::SeqCst);
            self.questions.fetch_add(questions.len(), Ordering::SeqCst);
            if self.silent {
                std::future::pending::<()>().await;
            }
            if self.wrong_kind {
                return Ok(questions
                    .iter()
                    .map(|_| Answer::Roots(Vec::new()))
                    .collect());
            }
            toolhost::ask::one_by_one(self, questions).await
        })
    }
}

fn root(uri: &str) -> Root {
    Root {
        uri: uri.into(),
        name: Some("project".into()),
    }
}

/// Ask `questions` (`(key, kind)`) `times` times with `asker`; the tool's
/// text.
async fn ask(
    host: &toolhost::Host,
    asker: Arc<Answers>,
    questions: &[(&str, &str)],
    times: u32,
) -> String {
    let questions: Vec<Value> = questions
        .iter()
        .map(|(key, kind)| json!({"key": key, "kind": kind}))
        .collect();
    let result = host
        .call(
            "ask_all",
            json!({"questions": questions, "times": times}),
            &live().with_asker(asker),
        )
        .await
        .unwrap();
    assert!(!result.is_error, "{:?}", result.result);
    result.result.as_str().unwrap_or_default().to_string()
}

/// The user, the model and the client's roots asked together come back in
/// the order asked, through the surface's `ask_all` once.
#[tokio::test]
async fn questions_asked_together_are_answered_in_order() {
    let (_dir, host) = common::host(&["ask_all"], GRANTED).await;
    let asker = Answers::with_roots(vec![root("file:///work/a"), root("file:///work/b")]);
    let said = ask(
        &host,
        asker.clone(),
        &[
            ("client_roots", "roots"),
            ("user_name", "user"),
            ("greeting", "model"),
        ],
        1,
    )
    .await;
    assert_eq!(
        said,
        "roots: file:///work/a file:///work/b\nuser: {\"name\":\"Ada\"}\nmodel: Your name?"
    );
    assert_eq!(asker.rounds.load(Ordering::SeqCst), 1);
}

/// Keys that are empty, too long, not of the allowed characters, or twice
/// in one ask; no questions or more than 8: each refused with the reason,
/// before anyone is asked.
#[tokio::test]
async fn bad_keys_and_counts_are_refused_before_asking() {
    let (_dir, host) = common::host(&["ask_all"], GRANTED).await;
    let long = "k".repeat(65);
    let nine: Vec<(String, &str)> = (0..9).map(|i| (format!("q{i}"), "user")).collect();
    let nine: Vec<(&str, &str)> = nine.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let cases: [(&[(&str, &str)], &str); 7] = [
        (&[("", "user")], "the key \"\" is not 1-64 characters"),
        (&[(&long, "user")], "is not 1-64 characters"),
        (&[("a b", "user")], "the key \"a b\" is not"),
        (&[("ключ", "user")], "is not 1-64 characters"),
        (
            &[("x", "user"), ("x", "model")],
            "the key `x` names two questions",
        ),
        (&[], "ask-all takes 1 to 8 questions, not 0"),
        (&nine, "ask-all takes 1 to 8 questions, not 9"),
    ];
    let asker = Answers::with_roots(Vec::new());
    for (questions, expected) in cases {
        let said = ask(&host, asker.clone(), questions, 1).await;
        assert!(
            said.starts_with("refused: ") && said.contains(expected),
            "{questions:?}: {said}"
        );
    }
    assert_eq!(asker.rounds.load(Ordering::SeqCst), 0);
}

/// A question the tool was not granted refuses the whole ask before any
/// is put to anyone, naming the grant that is missing.
#[tokio::test]
async fn an_ungranted_question_refuses_them_all() {
    let config = "[tools.ask_all]\nask = [\"user\"]\n";
    let (_dir, host) = common::host(&["ask_all"], config).await;
    let asker = Answers::with_roots(vec![root("file:///w")]);
    let said = ask(&host, asker.clone(), &[("a", "user"), ("b", "roots")], 1).await;
    assert!(
        said.contains(
            "tool `ask_all` may not ask the client for its roots: the operator grants it with \
             `ask = [\"roots\"]`"
        ),
        "{said}"
    );
    assert_eq!(asker.rounds.load(Ordering::SeqCst), 0);
}

/// Each question counts against the 16 a call may ask: two asks of 8 go,
/// a third is refused without being asked.
#[tokio::test]
async fn every_question_counts_against_the_calls_sixteen() {
    let (_dir, host) = common::host(&["ask_all"], GRANTED).await;
    let eight: Vec<(String, &str)> = (0..8).map(|i| (format!("q{i}"), "user")).collect();
    let eight: Vec<(&str, &str)> = eight.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let asker = Answers::with_roots(Vec::new());
    let said = ask(&host, asker.clone(), &eight, 3).await;
    assert!(
        said.contains("this call asked 16 questions already; 8 more would pass 16"),
        "{said}"
    );
    assert_eq!(asker.questions.load(Ordering::SeqCst), 16);
}

/// Roots a client names are checked: not file URIs, control characters,
/// more than 256, or more bytes than the tool takes in.
#[tokio::test]
async fn hostile_roots_are_refused_with_the_reason() {
    let config = format!("{GRANTED}max_input_bytes = 65536\n");
    let (_dir, host) = common::host(&["ask_all"], &config).await;
    let many: Vec<Root> = (0..257).map(|i| root(&format!("file:///r{i}"))).collect();
    let huge: Vec<Root> = (0..100)
        .map(|i| root(&format!("file:///{i}{}", "x".repeat(1000))))
        .collect();
    let cases = [
        (
            vec![root("https://example.com/")],
            "root 0 is \"https://example.com/\": a root is a file:// URI",
        ),
        (
            vec![root("file:///a\u{1b}[2J")],
            "root 0's URI holds the control character U+001B",
        ),
        (many, "the client named 257 roots; at most 256 are taken"),
        (huge, "at most 65536 are allowed (max_input_bytes)"),
    ];
    for (roots, expected) in cases {
        let said = ask(&host, Answers::with_roots(roots), &[("r", "roots")], 1).await;
        assert!(said.contains(expected), "{expected}: {said}");
    }
}

/// A surface answering with the wrong kind of answer is refused, naming
/// the question.
#[tokio::test]
async fn an_answer_of_the_wrong_kind_is_refused() {
    let (_dir, host) = common::host(&["ask_all"], GRANTED).await;
    let asker = Arc::new(Answers {
        wrong_kind: true,
        ..Answers::default()
    });
    let said = ask(&host, asker, &[("user_name", "user")], 1).await;
    assert!(
        said.contains("question `user_name`: the answer is not of the kind asked"),
        "{said}"
    );
}

/// A surface with no client roots (the CLI, the library by default)
/// refuses a roots question with the reason.
#[tokio::test]
async fn a_surface_without_roots_says_so() {
    let (_dir, host) = common::host(&["ask_all"], GRANTED).await;
    let result = host
        .call(
            "ask_all",
            json!({"questions": [{"key": "r", "kind": "roots"}]}),
            &live(),
        )
        .await
        .unwrap();
    let said = result.result.as_str().unwrap_or_default();
    assert!(
        said.starts_with("refused: ") && said.contains("no client whose roots could be listed"),
        "{said}"
    );
}

/// Questions nobody answers wait `ask_timeout_ms` in all, the call's own
/// timeout stopped meanwhile, and the host runs other calls as they wait.
#[tokio::test]
async fn questions_nobody_answers_end_at_the_ask_timeout() {
    let config = format!("[limits]\nask_timeout_ms = 300\n{GRANTED}timeout_ms = 100\n");
    let (_dir, host) = common::host(&["ask_all", "echo"], &config).await;
    let silent = Arc::new(Answers {
        silent: true,
        ..Answers::default()
    });
    let started = std::time::Instant::now();
    let asking = ask(&host, silent, &[("a", "user"), ("b", "roots")], 1);
    let options = live();
    let echo = host.call("echo", json!({"text": "meanwhile"}), &options);
    let (said, echoed) = tokio::join!(asking, echo);
    assert!(
        said.contains("no answer came within 300 ms: a call's questions wait 300 ms in all"),
        "{said}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(echoed.unwrap().result, json!("meanwhile"));
}

//! `aztable reset`: a running server's clean slate between tests, through its admin
//! endpoint `DELETE /_aztable/data` (every table of every account, or of `--account`).
//! The endpoint is open on a loopback-only server and otherwise asks for an account key,
//! which is sent in `x-aztable-key` (by default the development account's).

use clap::Parser;

/// Delete every table of a running aztable server (or of one account): the clean slate
/// between tests.
#[derive(Debug, Parser)]
#[command(long_about = None)]
pub struct ResetArgs {
    /// The server, e.g. http://127.0.0.1:10002 (a path after the port is ignored).
    #[arg(long = "url", value_name = "URL", default_value = "http://127.0.0.1:10002")]
    pub url: String,

    /// Only this account's tables (default: every account's).
    #[arg(long = "account", value_name = "NAME")]
    pub account: Option<String>,

    /// An account key (base64) for a server that listens beyond loopback. Default: the
    /// development account's well-known key. Env: AZTABLE_ACCOUNT_KEY.
    #[arg(long = "key", value_name = "BASE64", env = "AZTABLE_ACCOUNT_KEY", hide_env_values = true)]
    pub key: Option<String>,
}

/// Runs `aztable reset ...`; the process's exit code.
pub fn run_reset(args: ResetArgs) -> std::process::ExitCode {
    crate::exit_code(crate::runtime().and_then(|rt| rt.block_on(reset(&args))))
}

async fn reset(args: &ResetArgs) -> Result<(), String> {
    let base = reqwest::Url::parse(&args.url).map_err(|e| format!("--url {}: {e}", args.url))?;
    let mut url = base.join("/_aztable/data").map_err(|e| format!("--url {}: {e}", args.url))?;
    if let Some(account) = &args.account {
        url.query_pairs_mut().append_pair("account", account);
    }
    let key = args.key.clone().unwrap_or_else(|| aztable_wire::auth::DEV_KEY.to_owned());
    let http = reqwest::Client::builder().build().map_err(|e| e.to_string())?;
    let resp = http
        .delete(url.clone())
        .header("x-aztable-key", key)
        .send()
        .await
        .map_err(|e| format!("DELETE {url}: {e}"))?;
    let status = resp.status();
    let body = resp.text().await.map_err(|e| format!("DELETE {url}: {e}"))?;
    if !status.is_success() {
        return Err(format!("DELETE {url}: HTTP {status}: {}", body.trim()));
    }
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    println!("reset: {} table(s) deleted", answer["tables_deleted"].as_u64().unwrap_or(0));
    Ok(())
}

//! The auth-core signer (`docs/protocol.md` §2): the intermediary wallet and its signatures.
//! Every call carries the session's JWT as a bearer token.

use serde::Deserialize;
use serde_json::json;

use super::{CallError, Http, HttpSettings, bearer, decode};

/// A signature from the signer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Signature {
    /// `0x` + 65 bytes `r‖s‖v` in hex (EIP-191 `personal_sign`).
    pub signature: String,
    /// The wallet that signed.
    pub address: String,
}

#[derive(Deserialize)]
struct WalletAnswer {
    address: String,
}

/// Client of the auth-core signer.
#[derive(Debug)]
pub struct SignerClient {
    base_url: String,
    http: Http,
}

impl SignerClient {
    /// A client of the signer at `base_url`.
    pub fn new(base_url: &str, settings: &HttpSettings) -> SignerClient {
        SignerClient {
            base_url: base_url.trim_end_matches('/').to_owned(),
            http: Http::new(settings),
        }
    }

    /// `GET /v1/wallet`: the intermediary wallet of the session's subject.
    pub async fn wallet(&self, jwt: &str) -> Result<String, CallError> {
        let url = format!("{}/v1/wallet", self.base_url);
        let reply = self.http.get(url, bearer(jwt)).await.map_err(CallError::Transport)?;
        let answer: WalletAnswer = decode("signer wallet", reply)?;
        Ok(answer.address)
    }

    /// `POST /v1/sign`: the wallet's signature of `message` (`0x` + 32 bytes hex).
    pub async fn sign(&self, jwt: &str, message: &str) -> Result<Signature, CallError> {
        let url = format!("{}/v1/sign", self.base_url);
        let body = json!({ "message": message }).to_string();
        let reply = self.http.post(url, bearer(jwt), body).await.map_err(CallError::Transport)?;
        decode("signer sign", reply)
    }
}

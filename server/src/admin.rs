//! The admin commands of the user-lookup store (`depositkit-server` and `depositkit-devnet`
//! share them): projects, users, wallets, identities, sessions, interactions, imports. They work
//! on the database directly (the store's URL), so they need no running server and add no admin
//! surface to the public port; a server sees their changes at its next request.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand};

use crate::error::{Error, Result};
use crate::records::{ChainFamily, NewUser, Profile};
use crate::store::{UserStore, import};

/// The admin commands. Each prints its result on stdout: JSON for records, one line per id or
/// token otherwise.
#[derive(Subcommand)]
pub enum AdminCommand {
    /// Manage projects.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage user wallets.
    #[command(subcommand)]
    Wallet(WalletCommand),
    /// Manage identities (provider + uid) of users.
    #[command(subcommand)]
    Identity(IdentityCommand),
    /// Manage session tokens of users.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Record addresses that interacted with a project.
    #[command(subcommand)]
    Interaction(InteractionCommand),
    /// Import users from a JSON array of User records (one transaction; prints their uuids).
    Import {
        /// Project to import into.
        #[arg(long)]
        project: String,
        /// JSON file: [{"email": ..., "wallets": [...], "identities": [...], "sessions": [...]}, ...].
        file: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum ProjectCommand {
    /// Create a project; prints {"projectId", "serverKey"} (the key is shown only now).
    Create {
        /// Display name of the project.
        #[arg(long)]
        name: String,
    },
    /// Replace a project's server key; prints {"projectId", "serverKey"}.
    RotateKey {
        /// Project id.
        #[arg(long)]
        project: String,
    },
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Add a user to a project; prints its uuid.
    Add(Box<UserAddArgs>),
    /// Print a user's record (the JSON getUserInfo answers with).
    Show {
        /// Project id.
        #[arg(long)]
        project: String,
        /// User uuid.
        #[arg(long)]
        uuid: String,
    },
    /// Print the uuids of a project's users, oldest first.
    List {
        /// Project id.
        #[arg(long)]
        project: String,
    },
}

#[derive(Args)]
pub struct UserAddArgs {
    /// Project id the user belongs to.
    #[arg(long)]
    project: String,
    /// The user's uuid (a random v4 uuid when omitted).
    #[arg(long)]
    uuid: Option<String>,
    /// E-mail (required); every other profile field is optional.
    #[arg(long)]
    email: String,
    #[arg(long)]
    phone: Option<String>,
    #[arg(long)]
    name: Option<String>,
    #[arg(long)]
    avatar: Option<String>,
    #[arg(long)]
    facebook_id: Option<String>,
    #[arg(long)]
    facebook_email: Option<String>,
    #[arg(long)]
    google_id: Option<String>,
    #[arg(long)]
    google_email: Option<String>,
    #[arg(long)]
    apple_id: Option<String>,
    #[arg(long)]
    apple_email: Option<String>,
    #[arg(long)]
    twitter_id: Option<String>,
    #[arg(long)]
    twitter_email: Option<String>,
    #[arg(long)]
    telegram_id: Option<String>,
    #[arg(long)]
    telegram_phone: Option<String>,
    #[arg(long)]
    discord_id: Option<String>,
    #[arg(long)]
    discord_email: Option<String>,
    #[arg(long)]
    github_id: Option<String>,
    #[arg(long)]
    github_email: Option<String>,
    #[arg(long)]
    twitch_id: Option<String>,
    #[arg(long)]
    twitch_email: Option<String>,
    #[arg(long)]
    microsoft_id: Option<String>,
    #[arg(long)]
    microsoft_email: Option<String>,
    #[arg(long)]
    linkedin_id: Option<String>,
    #[arg(long)]
    linkedin_email: Option<String>,
}

impl UserAddArgs {
    fn into_new_user(self) -> (String, NewUser) {
        let profile = Profile {
            phone: self.phone,
            email: self.email,
            name: self.name,
            avatar: self.avatar,
            facebook_id: self.facebook_id,
            facebook_email: self.facebook_email,
            google_id: self.google_id,
            google_email: self.google_email,
            apple_id: self.apple_id,
            apple_email: self.apple_email,
            twitter_id: self.twitter_id,
            twitter_email: self.twitter_email,
            telegram_id: self.telegram_id,
            telegram_phone: self.telegram_phone,
            discord_id: self.discord_id,
            discord_email: self.discord_email,
            github_id: self.github_id,
            github_email: self.github_email,
            twitch_id: self.twitch_id,
            twitch_email: self.twitch_email,
            microsoft_id: self.microsoft_id,
            microsoft_email: self.microsoft_email,
            linkedin_id: self.linkedin_id,
            linkedin_email: self.linkedin_email,
        };
        (self.project, NewUser { uuid: self.uuid, profile })
    }
}

#[derive(Subcommand)]
pub enum WalletCommand {
    /// Add a wallet to a user (EVM addresses are stored lower-cased).
    Add {
        /// User uuid.
        #[arg(long)]
        user: String,
        #[arg(long, value_parser = parse_chain)]
        chain: ChainFamily,
        #[arg(long)]
        address: String,
    },
}

#[derive(Subcommand)]
pub enum IdentityCommand {
    /// Link an identity to a user (getUserInfoByIdentity looks up provider "jwt").
    Add {
        /// User uuid.
        #[arg(long)]
        user: String,
        #[arg(long, default_value = "jwt")]
        provider: String,
        #[arg(long)]
        uid: String,
    },
}

#[derive(Subcommand)]
pub enum SessionCommand {
    /// Create a session token for a user; prints the token (shown only now).
    Add {
        /// User uuid.
        #[arg(long)]
        user: String,
        /// Lifetime in seconds; negative values create an already expired token.
        #[arg(long, default_value_t = 86_400, allow_negative_numbers = true)]
        ttl_seconds: i64,
        /// Use this token instead of a random one.
        #[arg(long)]
        token: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum InteractionCommand {
    /// Record that an address interacted with a project (isProjectUser then answers true).
    Add {
        /// Project id.
        #[arg(long)]
        project: String,
        /// evm_chain or solana.
        #[arg(long, value_parser = parse_chain)]
        chain: ChainFamily,
        #[arg(long)]
        address: String,
    },
}

pub fn parse_chain(text: &str) -> std::result::Result<ChainFamily, String> {
    ChainFamily::parse(text).ok_or_else(|| {
        format!("expected evm_chain or solana, got {}", depositkit_core::describe::quote(text))
    })
}

impl AdminCommand {
    /// Runs the command on `store`, printing its result to `out`.
    ///
    /// # Errors
    /// What the store refuses (naming the bad value), database failures, or `out` failing.
    pub async fn run(self, store: &UserStore, out: &mut impl Write) -> Result<()> {
        let line = match self {
            AdminCommand::Project(ProjectCommand::Create { name }) => {
                json_line(&store.create_project(&name).await?)
            }
            AdminCommand::Project(ProjectCommand::RotateKey { project }) => {
                json_line(&store.rotate_server_key(&project).await?)
            }
            AdminCommand::User(UserCommand::Add(args)) => {
                let (project, user) = args.into_new_user();
                store.add_user(&project, &user).await?
            }
            AdminCommand::User(UserCommand::Show { project, uuid }) => {
                let uuid = crate::records::normalize_uuid("uuid", &uuid)?;
                match store
                    .user(&crate::records::normalize_uuid("project", &project)?, &uuid)
                    .await?
                {
                    Some(user) => json_line(&user),
                    None => {
                        return Err(Error::NotFound(format!(
                            "user {uuid} not found in project {project}"
                        )));
                    }
                }
            }
            AdminCommand::User(UserCommand::List { project }) => {
                let project = crate::records::normalize_uuid("project", &project)?;
                store.user_uuids(&project).await?.join("\n")
            }
            AdminCommand::Wallet(WalletCommand::Add { user, chain, address }) => {
                store.add_wallet(&user, chain, &address).await?;
                return Ok(());
            }
            AdminCommand::Identity(IdentityCommand::Add { user, provider, uid }) => {
                store.add_identity(&user, &provider, &uid).await?;
                return Ok(());
            }
            AdminCommand::Session(SessionCommand::Add { user, ttl_seconds, token }) => {
                let ttl = Duration::from_secs(ttl_seconds.unsigned_abs());
                let now = SystemTime::now();
                let expires_at = if ttl_seconds >= 0 { now + ttl } else { now - ttl };
                store.add_session(&user, token.as_deref(), expires_at).await?
            }
            AdminCommand::Interaction(InteractionCommand::Add { project, chain, address }) => {
                store.add_interaction(&project, chain, &address).await?;
                return Ok(());
            }
            AdminCommand::Import { project, file } => {
                let records = import::read_file(&file)?;
                store.import_users(&project, &records).await?.join("\n")
            }
        };
        if !line.is_empty() {
            writeln!(out, "{line}").map_err(|e| Error::io("stdout", e))?;
        }
        Ok(())
    }
}

fn json_line(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

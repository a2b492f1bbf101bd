//! Why a server was refused before any call, in words that say what to
//! change in the command.

use super::*;

/// Why a server was refused before any call: a mistake in the command
/// (scheme, certificates), which trying again would not mend.
#[derive(Debug, Clone)]
pub struct Refused {
    /// The server, as `host:port`.
    pub(super) at: String,
    pub(super) why: Why,
}

#[derive(Debug, Clone)]
pub(super) enum Why {
    /// Occurs when an `http://` server answers in TLS.
    SpeaksTls,
    /// Occurs when an `https://` server answers the TLS hello in something else.
    NoTls,
    /// Occurs when the server's certificate is past its end, given when known.
    Expired(Option<u64>),
    /// Occurs when the server's certificate is not valid yet.
    NotYetValid,
    /// Occurs when the server's certificate chains to no trusted CA;
    /// holds --ca-cert when one was given.
    UnknownIssuer(Option<PathBuf>),
    /// Occurs when the server's certificate is for other names.
    OtherName(String),
    /// Occurs when the server's certificate is refused for another reason.
    Certificate(String),
    /// Occurs when a server that wants a client certificate got none.
    ClientCertWanted,
    /// Occurs when the server refused the client's certificate, with its alert.
    ClientCertRefused(String),
    /// Occurs when the server does not offer HTTP/2 over TLS.
    NoHttp2,
    /// Occurs when TLS failed otherwise.
    Tls(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = &self.at;
        let cert = format!("the certificate of the server at {at}");
        match &self.why {
            Why::SpeaksTls => write!(f, "the server at {at} speaks TLS: use https://{at}"),
            Why::NoTls => write!(f, "the server at {at} does not speak TLS: use http://{at}"),
            Why::Expired(Some(end)) => write!(f, "{cert} expired on {}", utc(*end)),
            Why::Expired(None) => write!(f, "{cert} expired"),
            Why::NotYetValid => write!(f, "{cert} is not valid yet"),
            Why::UnknownIssuer(Some(ca)) => write!(
                f,
                "{cert} is not signed by the CA in --ca-cert {}",
                ca.display()
            ),
            Why::UnknownIssuer(None) => write!(
                f,
                "{cert} is not signed by a CA this system trusts; give its CA with --ca-cert FILE"
            ),
            Why::OtherName(names) => write!(f, "{cert} is not for that name ({names})"),
            Why::Certificate(e) => write!(f, "{cert} is refused: {e}"),
            Why::ClientCertWanted => write!(
                f,
                "the server at {at} asks for a client certificate (mutual TLS); give --client-cert and --client-key"
            ),
            Why::ClientCertRefused(alert) => write!(
                f,
                "the server at {at} refused the client certificate ({alert}); is it signed by a CA the server trusts?"
            ),
            Why::NoHttp2 => write!(f, "the server at {at} does not offer HTTP/2 over TLS"),
            Why::Tls(e) => write!(f, "TLS with the server at {at} failed: {e}"),
        }
    }
}

impl std::error::Error for Refused {}

/// `secs` since 1970 as a UTC date and time.
pub(super) fn utc(secs: u64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// True when `bytes` open a TLS record: a content type (change cipher
/// spec, alert, handshake, application data) and major version 3. No
/// HTTP/2 server starts so: its first frame is a SETTINGS frame, whose
/// 3-byte length would then be over a megabyte.
pub(super) fn tls_record(bytes: &[u8]) -> bool {
    matches!(bytes, [20..=23, 3, ..] | [20..=23])
}

/// What a TLS failure means for the user, or `None` for an I/O failure
/// that is no TLS's.
pub(super) fn why_tls_failed(
    err: &io::Error,
    has_identity: bool,
    ca_cert: &Option<PathBuf>,
) -> Option<Why> {
    use rustls::Error as E;
    let tls = err.get_ref()?.downcast_ref::<rustls::Error>()?;
    Some(match tls {
        E::InvalidCertificate(cert) => match cert {
            CertificateError::Expired => Why::Expired(None),
            CertificateError::ExpiredContext { not_after, .. } => {
                Why::Expired(Some(not_after.as_secs()))
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                Why::NotYetValid
            }
            CertificateError::UnknownIssuer => Why::UnknownIssuer(ca_cert.clone()),
            CertificateError::NotValidForName => Why::OtherName("another name".into()),
            CertificateError::NotValidForNameContext {
                expected,
                presented,
            } => Why::OtherName(format!(
                "wanted {}, it names {}",
                expected.to_str(),
                presented.join(", ")
            )),
            other => Why::Certificate(format!("{other:?}")),
        },
        E::AlertReceived(AlertDescription::CertificateRequired) => Why::ClientCertWanted,
        E::AlertReceived(AlertDescription::HandshakeFailure) if !has_identity => {
            Why::ClientCertWanted
        }
        E::AlertReceived(
            alert @ (AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateRevoked
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::AccessDenied),
        ) if has_identity => Why::ClientCertRefused(format!("{alert:?}")),
        E::AlertReceived(AlertDescription::NoApplicationProtocol) => Why::NoHttp2,
        other => Why::Tls(other.to_string()),
    })
}

/// The [`Refused`] somewhere in `err`'s chain of causes.
pub(super) fn refusal<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refused> {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if let Some(r) = e.downcast_ref::<Refused>() {
            return Some(r);
        }
        if let Some(r) = e
            .downcast_ref::<io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<Refused>())
        {
            return Some(r);
        }
        cause = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_records_and_http2_frames_told_apart() {
        // An alert (what a TLS server answers the HTTP/2 preface with) and
        // a handshake record.
        assert!(tls_record(&[0x15, 0x03, 0x03, 0x00, 0x02]));
        assert!(tls_record(&[0x16, 0x03, 0x01]));
        assert!(tls_record(&[0x15]));
        // A SETTINGS frame, an HTTP/1 answer.
        assert!(!tls_record(&[0x00, 0x00, 0x12, 0x04]));
        assert!(!tls_record(b"HTTP/1.1 400"));
        assert!(!tls_record(&[]));
    }

    #[test]
    fn refusals_in_words() {
        let at = |why| Refused {
            at: "127.0.0.1:50443".into(),
            why,
        };
        assert_eq!(
            at(Why::SpeaksTls).to_string(),
            "the server at 127.0.0.1:50443 speaks TLS: use https://127.0.0.1:50443"
        );
        assert_eq!(
            at(Why::NoTls).to_string(),
            "the server at 127.0.0.1:50443 does not speak TLS: use http://127.0.0.1:50443"
        );
        // 2021-01-01T00:00:00Z and a leap day.
        assert_eq!(utc(1_609_459_200), "2021-01-01 00:00:00 UTC");
        assert_eq!(utc(951_827_696), "2000-02-29 12:34:56 UTC");
        assert!(
            at(Why::Expired(Some(1_609_459_200)))
                .to_string()
                .ends_with("expired on 2021-01-01 00:00:00 UTC")
        );
    }
}

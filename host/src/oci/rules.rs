//! What the operator decided about registries (`[registries]` and `[trust]`
//! in `toolhost.toml`): which are spoken to over plain HTTP, and whose
//! signatures a tool from each must carry.

use super::Reference;
use super::signature::Trust;

/// How this host treats registries.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Registries (`host[:port]`, as references write them) spoken to over
    /// plain HTTP.
    pub insecure: Vec<String>,
    /// Whose signatures count, each for its scope: `*`, a registry, or a
    /// registry and a repository or a folder of repositories.
    pub trust: Vec<Trust>,
}

impl Rules {
    /// The `oci://` reference `text`, spoken to over plain HTTP when its
    /// registry is listed insecure.
    pub fn reference(&self, text: &str) -> Result<Reference, String> {
        Reference::parse(text).map(|reference| reference.insecure_among(&self.insecure))
    }

    /// Whose signatures a tool from `reference` must carry: the trust
    /// naming its repository or the longest folder of it, else its
    /// registry, else `*`; none when no scope covers it.
    pub fn trust_for(&self, reference: &Reference) -> Option<&Trust> {
        let registry = reference.registry.as_str();
        let repository = format!("{registry}/{}", reference.repository);
        self.trust
            .iter()
            .filter_map(|trust| {
                let scope = trust.scope.as_str();
                let covers = scope == "*"
                    || scope.eq_ignore_ascii_case(registry)
                    || (repository.starts_with(scope)
                        && repository
                            .as_bytes()
                            .get(scope.len())
                            .is_none_or(|b| *b == b'/'));
                // `*` is the least specific; a registry less than any
                // repository path in it.
                let rank = if scope == "*" { 0 } else { scope.len() + 1 };
                covers.then_some((rank, trust))
            })
            .max_by_key(|(rank, _)| *rank)
            .map(|(_, trust)| trust)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_scope_covering_a_source_applies() {
        let scoped = |scope: &str| Trust {
            scope: scope.into(),
            keys: vec![],
            required: true,
        };
        let rules = Rules {
            insecure: vec![],
            trust: [
                "*",
                "r.example",
                "r.example/acme",
                "r.example/acme/tools/echo",
            ]
            .map(scoped)
            .to_vec(),
        };
        let scope_of = |text: &str| {
            rules
                .trust_for(&Reference::parse(text).unwrap())
                .map(|t| t.scope.clone())
        };
        for (reference, scope) in [
            (
                "oci://r.example/acme/tools/echo:v1",
                "r.example/acme/tools/echo",
            ),
            ("oci://r.example/acme/tools/echo2", "r.example/acme"),
            ("oci://r.example/acme/x", "r.example/acme"),
            ("oci://r.example/acmeco/x", "r.example"),
            ("oci://other.example/acme/x", "*"),
            ("oci://r.example:5000/acme/x", "*"),
        ] {
            assert_eq!(scope_of(reference).as_deref(), Some(scope), "{reference}");
        }
        let without_star = Rules {
            trust: rules.trust[1..].to_vec(),
            ..rules.clone()
        };
        let elsewhere = Reference::parse("oci://other.example/x").unwrap();
        assert!(without_star.trust_for(&elsewhere).is_none());
    }

    #[test]
    fn only_a_listed_registry_is_spoken_to_over_plain_http() {
        let rules = Rules {
            insecure: vec!["Registry.Internal:5000".into()],
            trust: vec![],
        };
        let listed = rules
            .reference("oci://registry.internal:5000/team/x")
            .unwrap();
        assert_eq!(listed.base_url(), "http://registry.internal:5000");
        for other in [
            "oci://registry.internal/team/x",
            "oci://registry.internal:5001/team/x",
            "oci://ghcr.io/team/x",
        ] {
            assert!(
                rules
                    .reference(other)
                    .unwrap()
                    .base_url()
                    .starts_with("https://"),
                "{other}"
            );
        }
    }
}

use super::region_distance;

#[test]
fn region_distance_table() {
    let cases = [
        ("eu-west-1", "eu-west-1", 0),
        ("eu-west-1", "eu-west-2", 2),
        ("eu-west-1", "eu-east-1", 2),
        ("eu-north-1", "eu-central-1", 2),
        ("us-east-1", "eu-east-1", 4),
        ("europe-west1", "eu-west-1", 10),
        ("asia-south1", "asia-south1", 0),
        (
            "westeurope",
            "eastus",
            2 * strsim::levenshtein(":europe", ":us") as i64 + 2,
        ),
        ("local", "local-2", 4),
        (
            "eu-west-1",
            "local",
            2 * strsim::levenshtein("eu-:-1", "local") as i64 + 1,
        ),
    ];
    for (seed, shoot, want) in cases {
        assert_eq!(region_distance(seed, shoot), want, "{seed} vs {shoot}");
    }
}

/// Upstream compares the names as runes (`[]rune`): a non-ASCII character is one edit, as
/// gardener-apiserver lets a region hold any character.
#[test]
fn a_non_ascii_character_is_one_edit_as_upstream_counts_runes() {
    assert_eq!(region_distance("é", "e"), 2);
    assert_eq!(region_distance("eu-wést-1", "eu-wèst-1"), 2);
    assert_eq!(region_distance("ap-東京-1", "ap-大阪-1"), 4);
}

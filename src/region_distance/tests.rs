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

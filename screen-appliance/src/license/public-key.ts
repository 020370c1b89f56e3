/**
 * The vendor's Ed25519 public key, built in so a customer cannot swap it by editing a file in the
 * image. Tests and staging set `SCREEN_LICENSE_PUBLIC_KEY` instead. The matching private key is
 * kept outside git by the vendor (see README, "Issuing licenses").
 */
export const BUILT_IN_LICENSE_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAhhu9efjVtQoV7ahBSgB7MSbeeHg068Gne8v258wf7/A=
-----END PUBLIC KEY-----
`;

/** Agentry's version; a unit test keeps it equal to package.json's. */
export const AGENTRY_VERSION = '0.1.0';

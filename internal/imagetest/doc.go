// Package imagetest holds the test of the container image: the top-level
// Dockerfile's final stage, built with buildah from binaries built on the
// host (no base image to pull: the stage is FROM scratch), then started to
// see it refuse to listen without tokens, answer /readyz with them, and
// pass its own HEALTHCHECK.
//
// It is opt-in (ENGRAM_IMAGE_TEST=1): building static binaries and an image
// takes a minute or more. .ci/run sets it when buildah is installed. It
// skips, saying why, where buildah is missing or cannot run a container
// (chroot isolation and vfs storage need root). Nothing is pulled and
// nothing is left behind: buildah's storage lives in the test's temp dir.
package imagetest

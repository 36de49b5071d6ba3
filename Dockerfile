# engram's image: the static binaries on an empty base, run as an
# unprivileged user, the data dir a volume. See docs/operations.md,
# "The container image".
#
#   docker build -t engram --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run -p 7420:7420 -v engram-data:/data -e ENGRAM_HTTP_TOKENS=a-long-random-token-of-yours=* engram

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
ARG COMMIT=
# CGO_ENABLED=0: SQLite is modernc's, in Go, so the binaries need no libc.
# timetzdata: rules name time zones, and the empty base has no zoneinfo.
RUN CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags "-s -w -X github.com/engramhq/engram/internal/app.Version=${VERSION} -X github.com/engramhq/engram/internal/app.Commit=${COMMIT}" \
      -o /rootfs/usr/local/bin/ ./cmd/engram ./cmd/ingest ./cmd/retriever ./cmd/extractor ./cmd/consolidator \
 && mkdir -p /rootfs/tmp /rootfs/etc/ssl/certs /data \
 && chmod 1777 /rootfs/tmp \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/

# The image itself: nothing but what the build stage put in /rootfs and an
# empty /data (the image test builds this stage from binaries built on the
# host).
FROM scratch AS image
COPY --from=build /rootfs/ /
# COPY makes what it copies root's; the data dir must be engram's user's.
COPY --from=build --chown=65532:65532 /data/ /data/
# Inside a container loopback is unreachable from outside, so engram listens
# on every interface, which it refuses to do without bearer tokens: run the
# image with ENGRAM_HTTP_TOKENS set. The embedded NATS stays on loopback.
ENV PATH=/usr/local/bin \
    ENGRAM_DATA_DIR=/data \
    ENGRAM_HTTP_ADDR=0.0.0.0:7420 \
    ENGRAM_LOG_FORMAT=json
WORKDIR /data
USER 65532:65532
VOLUME /data
EXPOSE 7420
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["engram", "health"]
CMD ["engram", "serve"]

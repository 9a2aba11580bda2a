# mongoprobe's image (see "The compose stack" in README.md).
#
# Built from the repository's root, whose go.work builds cmd/mongoprobe (its
# own module) against the library in the same tree:
#   docker build -t mongoprobe .
# tools/stackcheck runs this file's `go build` line with the same flags and
# starts the binary with the ENTRYPOINT's arguments, so keep that command on
# one RUN line.

FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
# The modules first, so that a change to the code alone reuses this layer.
COPY go.work go.work.sum go.mod go.sum ./
COPY cmd/mongoprobe/go.mod cmd/mongoprobe/go.sum ./cmd/mongoprobe/
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /mongoprobe ./cmd/mongoprobe

# A static binary needs no libc: distroless's static image, as user nonroot.
# It has no shell, so there is no HEALTHCHECK here (it would need curl or a
# shell); Prometheus's `up` and mongoprobe's /-/healthy tell the same.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /mongoprobe /usr/local/bin/mongoprobe
USER nonroot:nonroot
EXPOSE 9417
# Inside a container the endpoints must listen on every interface; they have
# no authentication, so publish the port on the host's loopback only (as
# docker-compose.yml does). Arguments given to `docker run` (CMD) follow these:
# --config.file, --uri, --demo, ...
ENTRYPOINT ["/usr/local/bin/mongoprobe", "--web.listen-address=:9417", "--web.listen-remote"]

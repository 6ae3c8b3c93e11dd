# A small pathprof image for the pods of "pathprof submit --engine
# kubernetes" (docs/cluster.md): a static pathprof on a distroless base.
#   docker build -t REGISTRY/pathprof:TAG .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags=-s -o /pathprof ./cmd/pathprof

# The static base has /tmp and no shell: the Job runs pathprof itself, as
# root by default, so that it can write the parts on the claim.
FROM gcr.io/distroless/static-debian12
COPY --from=build /pathprof /usr/local/bin/pathprof
ENTRYPOINT ["/usr/local/bin/pathprof"]

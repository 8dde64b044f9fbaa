# wirespeed in a container: one static binary on a distroless base, run as
# a non-root user. serve and mesh change no host settings, so they need no
# privileges; the lab and offload commands do (run those on the host).
#
#   docker build -t registry.example.com/wirespeed:v0.1.0 --build-arg VERSION=v0.1.0 .
#
# deploy/kubernetes/ runs it; docs/kubernetes.md walks through it.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY internal/ internal/
ARG VERSION=devel
# CGO_ENABLED=0: a static binary, nothing from the build image's libc.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X wirespeed/internal/cli.Version=${VERSION}" \
      -o /out/wirespeed ./cmd/wirespeed

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/wirespeed /usr/local/bin/wirespeed
# distroless's nonroot user.
USER 65532:65532
# The test port (control and data), and the metrics port the manifests use.
EXPOSE 7575 9575
ENTRYPOINT ["/usr/local/bin/wirespeed"]
CMD ["serve"]

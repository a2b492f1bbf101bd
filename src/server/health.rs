//! Health (`grpc.health.v1`, which turns NOT_SERVING on drain) and server
//! reflection (v1 and v1alpha) over the contract's descriptors.

use std::pin::Pin;

use tokio_util::sync::CancellationToken;
use tonic::Status;
use tonic_health::pb::health_server::Health;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tonic_health::server::HealthService;

/// `grpc.health.v1.Health` that ends Watch streams once the server drains
/// and the watcher has been told NOT_SERVING: a watch never ends by itself,
/// so without this every client watching health (gRPC client-side health
/// checking keeps one open per connection) would hold the drain open until
/// its deadline.
pub(super) struct DrainingHealth {
    pub(super) inner: HealthService,
    pub(super) stop: CancellationToken,
}

type WatchStream = Pin<Box<dyn futures::Stream<Item = Result<HealthCheckResponse, Status>> + Send>>;

#[tonic::async_trait]
impl Health for DrainingHealth {
    async fn check(
        &self,
        request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<HealthCheckResponse>, Status> {
        self.inner.check(request).await
    }

    type WatchStream = WatchStream;

    async fn watch(
        &self,
        request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<Self::WatchStream>, Status> {
        use futures::StreamExt;
        let inner = self.inner.watch(request).await?.into_inner();
        let stop = self.stop.clone();
        // The state: the inner stream, and whether the last status sent was
        // NOT_SERVING. Health turns NOT_SERVING before `stop` is cancelled,
        // so every watcher gets that status before its stream ends.
        let stream = futures::stream::unfold((inner, false), move |(mut inner, told)| {
            let stop = stop.clone();
            async move {
                let next = if told {
                    tokio::select! {
                        item = inner.next() => item,
                        _ = stop.cancelled() => None,
                    }
                } else {
                    inner.next().await
                };
                let item = next?;
                let told = matches!(&item, Ok(r) if r.status() == tonic_health::pb::health_check_response::ServingStatus::NotServing);
                Some((item, (inner, told)))
            }
        });
        Ok(tonic::Response::new(Box::pin(stream)))
    }
}

/// Server reflection, v1 and v1alpha, for the contract and health.
pub(super) fn reflection() -> Result<
    (
        tonic_reflection::server::v1::ServerReflectionServer<
            impl tonic_reflection::server::v1::ServerReflection,
        >,
        tonic_reflection::server::v1alpha::ServerReflectionServer<
            impl tonic_reflection::server::v1alpha::ServerReflection,
        >,
    ),
    crate::StartError,
> {
    let v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| crate::StartError::Reflection(e.into()))?;
    let v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .map_err(|e| crate::StartError::Reflection(e.into()))?;
    Ok((v1, v1alpha))
}

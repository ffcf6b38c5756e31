package defaults

import "strings"

// podSpec is a pod spec whose nested structures are present but empty,
// in flow style to sit inside any template.
const podSpec = `{containers: [{name: app, image: nginx, ports: [{containerPort: 80}, {containerPort: 53, protocol: UDP}],
    resources: {limits: {cpu: 500m, memory: 1Gi}},
    env: [{name: A, valueFrom: {fieldRef: {fieldPath: metadata.name}}}, {name: B, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}],
    livenessProbe: {httpGet: {port: 80}}, readinessProbe: {tcpSocket: {port: 80}}, startupProbe: {grpc: {port: 9000}},
    lifecycle: {preStop: {httpGet: {port: 80}}, postStart: {exec: {command: [x]}}}, securityContext: {}}],
  initContainers: [{name: init, image: "busybox:1.36", restartPolicy: Always, ports: [{containerPort: 8080, hostPort: 1}]}],
  ephemeralContainers: [{name: debug, image: busybox}],
  overhead: {cpu: 10m},
  resources: {limits: {cpu: "2"}},
  hostNetwork: true,
  volumes: [{name: empty}, {name: s, secret: {}}, {name: c, configMap: {}}, {name: d, downwardAPI: {items: [{path: p, fieldRef: {fieldPath: metadata.labels}}]}},
    {name: p, projected: {sources: [{serviceAccountToken: {path: t}}, {secret: {}}, {configMap: {}}, {downwardAPI: {items: [{path: q, fieldRef: {fieldPath: metadata.name}}]}}, {clusterTrustBundle: {path: b}}, {podCertificate: {signerName: a.b/c, keyType: RSA3072}}]}},
    {name: h, hostPath: {path: /x}}, {name: i, iscsi: {targetPortal: t, iqn: q, lun: 0}}, {name: r, rbd: {monitors: [m], image: i}},
    {name: ad, azureDisk: {diskName: d, diskURI: u}}, {name: sio, scaleIO: {gateway: g, system: s, secretRef: {name: "n"}}},
    {name: e, ephemeral: {volumeClaimTemplate: {spec: {}}}}, {name: im, image: {reference: busybox}},
    {name: f, fc: {wwids: [w]}}, {name: cf, cephfs: {monitors: [m]}}, {name: "n", nfs: {server: s, path: /p}}]}`

// templateSpec is a pod template holding podSpec.
var templateSpec = `{metadata: {labels: {app: a}}, spec: ` + podSpec + `}`

// minimalObjects are the documents TestMinimalObjectDefaultsLikeUpstream
// defaults; POD is podSpec and TEMPLATE templateSpec.
var minimalObjects = strings.NewReplacer("POD", podSpec, "TEMPLATE", templateSpec).Replace(`apiVersion: v1
kind: Pod
# a pod with every nested default
spec: POD
---
apiVersion: v1
kind: Pod
# an empty pod spec
spec: {}
---
apiVersion: v1
kind: PodTemplate
template: TEMPLATE
---
apiVersion: v1
kind: ReplicationController
spec: {template: TEMPLATE}
---
apiVersion: v1
kind: ReplicationController
# no template labels
spec: {template: {spec: {}}}
---
apiVersion: apps/v1
kind: Deployment
spec: {template: TEMPLATE}
---
apiVersion: apps/v1
kind: Deployment
# a rolling update named only
spec: {strategy: {type: RollingUpdate}, template: {spec: {}}}
---
apiVersion: apps/v1
kind: Deployment
spec: {strategy: {type: Recreate}, template: {spec: {}}}
---
apiVersion: apps/v1
kind: ReplicaSet
spec: {template: TEMPLATE}
---
apiVersion: apps/v1
kind: DaemonSet
spec: {template: TEMPLATE}
---
apiVersion: apps/v1
kind: DaemonSet
spec: {updateStrategy: {type: RollingUpdate}, template: {spec: {}}}
---
apiVersion: apps/v1
kind: DaemonSet
spec: {updateStrategy: {type: OnDelete}, template: {spec: {}}}
---
apiVersion: apps/v1
kind: StatefulSet
spec: {template: TEMPLATE, volumeClaimTemplates: [{spec: {}}, {metadata: {name: x}, spec: {volumeMode: Block}}]}
---
apiVersion: apps/v1
kind: StatefulSet
# a rolling update named only
spec: {updateStrategy: {type: RollingUpdate}, template: {spec: {}}}
---
apiVersion: apps/v1
kind: StatefulSet
spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {}}, persistentVolumeClaimRetentionPolicy: {}, template: {spec: {}}}
---
apiVersion: apps/v1
kind: StatefulSet
spec: {updateStrategy: {type: OnDelete}, podManagementPolicy: Parallel, template: {spec: {}}}
---
apiVersion: batch/v1
kind: Job
spec: {template: TEMPLATE}
---
apiVersion: batch/v1
kind: Job
# indexed, with a pod failure policy
spec: {completionMode: Indexed, completions: 3, podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget}]}, {action: FailJob, onExitCodes: {operator: In, values: [1]}}]}, template: {spec: {}}}
---
apiVersion: batch/v1
kind: Job
spec: {parallelism: 0, backoffLimitPerIndex: 1, completionMode: Indexed, template: {spec: {}}}
---
apiVersion: batch/v1
kind: Job
spec: {successPolicy: {rules: [{succeededCount: 1}]}, template: {spec: {}}}
---
apiVersion: batch/v1
kind: CronJob
spec: {schedule: "* * * * *", jobTemplate: {spec: {template: TEMPLATE}}}
---
apiVersion: v1
kind: Service
spec: {ports: [{port: 80}, {port: 53, protocol: UDP}]}
---
apiVersion: v1
kind: Service
spec: {type: NodePort, ports: [{port: 80, targetPort: 0}]}
---
apiVersion: v1
kind: Service
spec: {type: LoadBalancer, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
spec: {type: LoadBalancer, externalTrafficPolicy: Local, allocateLoadBalancerNodePorts: false, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
spec: {type: ExternalName, externalName: x.example}
---
apiVersion: v1
kind: Service
spec: {clusterIP: None, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
spec: {sessionAffinity: ClientIP}
---
apiVersion: v1
kind: Service
spec: {ipFamilyPolicy: PreferDualStack, ports: [{port: 80, name: a, targetPort: http}]}
---
apiVersion: v1
kind: Endpoints
subsets: [{addresses: [{ip: 10.0.0.1}], ports: [{port: 80}]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
addressType: IPv4
endpoints: [{addresses: [10.0.0.1]}]
ports: [{port: 80}, {}]
---
apiVersion: v1
kind: PersistentVolume
spec: {hostPath: {path: /x}}
---
apiVersion: v1
kind: PersistentVolume
spec: {iscsi: {targetPortal: t, iqn: q, lun: 0}, claimRef: {name: c}}
---
apiVersion: v1
kind: PersistentVolume
spec: {rbd: {monitors: [m], image: i}, azureDisk: {diskName: d, diskURI: u}, scaleIO: {gateway: g, system: s, secretRef: {name: "n"}}}
---
apiVersion: v1
kind: PersistentVolume
spec: {local: {path: /x}, volumeMode: Block}
---
apiVersion: v1
kind: PersistentVolumeClaim
spec: {}
---
apiVersion: v1
kind: PersistentVolumeClaim
spec: {dataSourceRef: {kind: PersistentVolumeClaim, name: x}}
---
apiVersion: v1
kind: PersistentVolumeClaim
spec: {dataSource: {kind: VolumeSnapshot, apiGroup: snapshot.storage.k8s.io, name: x}}
---
apiVersion: v1
kind: Namespace
---
apiVersion: v1
kind: Node
spec: {}
---
apiVersion: v1
kind: Node
status: {capacity: {cpu: "4"}}
---
apiVersion: v1
kind: LimitRange
spec: {limits: [{type: Container, max: {cpu: "1"}}, {type: Container, default: {cpu: "1"}, max: {memory: 1Gi}}, {type: Pod, max: {cpu: "1"}}, {type: Container, defaultRequest: {cpu: 100m}}]}
---
apiVersion: v1
kind: Secret
---
apiVersion: v1
kind: ConfigMap
---
apiVersion: v1
kind: ResourceQuota
spec: {}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
spec: {scaleTargetRef: {kind: Deployment, name: d}, maxReplicas: 3}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
spec: {scaleTargetRef: {kind: Deployment, name: d}, maxReplicas: 3, metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization}}}], behavior: {scaleUp: {}, scaleDown: {policies: [{type: Pods, value: 1, periodSeconds: 60}]}}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
spec: {scaleTargetRef: {kind: Deployment, name: d}, maxReplicas: 3, behavior: {}}
---
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
spec: {scaleTargetRef: {kind: Deployment, name: d}, maxReplicas: 3}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
spec: {ingress: [{ports: [{port: 80}, {}]}], egress: [{ports: [{}]}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
spec: {egress: [{}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
spec: {rules: [{http: {paths: [{path: /, backend: {service: {name: s, port: {number: 80}}}}]}}]}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
spec: {controller: x/y, parameters: {kind: K, name: "n"}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
webhooks: [{name: a.b.c, clientConfig: {service: {namespace: "n", name: s}}, rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}], sideEffects: None, admissionReviewVersions: [v1]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
webhooks: [{name: a.b.c, clientConfig: {url: "https://x"}, rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}], sideEffects: None, admissionReviewVersions: [v1]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
spec: {matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}, validations: [{expression: "true"}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
spec: {policyName: p, validationActions: [Deny], matchResources: {}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
spec: {matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}, mutations: [{patchType: ApplyConfiguration, applyConfiguration: {expression: "Object{}"}}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
spec: {policyName: p, matchResources: {}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
roleRef: {kind: Role, name: r}
subjects: [{kind: User, name: u}, {kind: Group, name: g}, {kind: ServiceAccount, name: s}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
roleRef: {kind: ClusterRole, name: r}
subjects: [{kind: User, name: u}, {kind: Group, name: g}, {kind: ServiceAccount, name: s, namespace: "n"}]
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
spec: {priorityLevelConfiguration: {name: p}, rules: [{subjects: [{kind: User, user: {name: u}}]}]}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
spec: {type: Limited, limited: {limitResponse: {type: Queue}}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
spec: {type: Limited, limited: {nominalConcurrencyShares: 0, limitResponse: {type: Reject}}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
spec: {type: Exempt, exempt: {}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
value: 10
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
handler: h
overhead: {podFixed: {cpu: 10m}}
scheduling: {tolerations: [{key: k}]}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
provisioner: p
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
spec: {}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
spec: {attacher: a, nodeName: "n", source: {inlineVolumeSpec: {hostPath: {path: /x}, iscsi: {targetPortal: t, iqn: q, lun: 0}}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}, {name: f, firstAvailable: [{name: a, deviceClassName: c}]}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c, allocationMode: All}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
spec: {driver: d, pool: {name: p, resourceSliceCount: 1}, allNodes: true, devices: [{name: x, taints: [{key: k, effect: NoSchedule}]}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
spec: {}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec: {group: g.example, names: {plural: fs, kind: F}, scope: Namespaced, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec: {group: g.example, names: {plural: fs, kind: F}, scope: Namespaced, conversion: {strategy: Webhook, webhook: {clientConfig: {service: {namespace: "n", name: s}}, conversionReviewVersions: [v1]}}}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
spec: {group: g, version: v1, service: {namespace: "n", name: s}, groupPriorityMinimum: 1, versionPriority: 1}
---
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
spec: {request: "", signerName: x/y}
`)

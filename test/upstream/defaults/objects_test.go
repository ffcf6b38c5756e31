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
---
apiVersion: v1
kind: Service
spec: {externalIPs: [1.2.3.4], ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
spec: {type: LoadBalancer, loadBalancerClass: x/y, internalTrafficPolicy: Local, ports: [{port: 80, appProtocol: h2c}]}
---
apiVersion: v1
kind: Service
spec: {type: NodePort, sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: {}}, ports: [{port: 80}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
spec: {scaleTargetRef: {kind: Deployment, name: d}, maxReplicas: 3, metrics: [{type: Pods, pods: {metric: {name: m}, target: {type: AverageValue}}}, {type: Object, object: {metric: {name: m}, describedObject: {kind: K, name: x}, target: {type: Value}}}, {type: External, external: {metric: {name: m}, target: {type: Value}}}, {type: ContainerResource, containerResource: {name: cpu, container: c, target: {type: Utilization}}}], behavior: {scaleUp: {policies: [{type: Percent, value: 10, periodSeconds: 60}]}, scaleDown: {stabilizationWindowSeconds: 5}}}
---
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
spec: {scaleTargetRef: {kind: Deployment, name: d}, minReplicas: 2, maxReplicas: 3, targetCPUUtilizationPercentage: 50}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
spec: {priorityLevelConfiguration: {name: p}, distinguisherMethod: {type: ByUser}, rules: [{subjects: [{kind: Group, group: {name: g}}, {kind: ServiceAccount, serviceAccount: {namespace: a, name: b}}], resourceRules: [{verbs: [get], apiGroups: [""], resources: [pods], namespaces: ["*"]}], nonResourceRules: [{verbs: [get], nonResourceURLs: [/x]}]}]}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
spec: {type: Limited, limited: {nominalConcurrencyShares: 5, lendablePercent: 10, limitResponse: {type: Queue, queuing: {}}}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
spec: {type: Limited, limited: {}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
spec: {defaultBackend: {resource: {kind: K, name: x}}, tls: [{hosts: [a.example]}]}
---
apiVersion: apps/v1
kind: Deployment
spec: {replicas: 0, strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0}}, progressDeadlineSeconds: 5, template: {spec: {}}}
---
apiVersion: apps/v1
kind: DaemonSet
spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}, template: {spec: {}}}
---
apiVersion: apps/v1
kind: StatefulSet
spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2, maxUnavailable: 50%}}, ordinals: {}, template: {spec: {}}}
---
apiVersion: batch/v1
kind: CronJob
spec: {schedule: "@hourly", concurrencyPolicy: Forbid, suspend: true, jobTemplate: {spec: {completionMode: Indexed, template: {spec: {}}}}}
---
apiVersion: batch/v1
kind: Job
spec: {podReplacementPolicy: Failed, managedBy: x/y, template: {spec: {restartPolicy: Never}}}
---
apiVersion: v1
kind: Pod
# security contexts, OS, DNS, restart policy rules
spec: {os: {name: windows}, dnsPolicy: None, dnsConfig: {}, restartPolicy: Never, securityContext: {seccompProfile: {type: RuntimeDefault}, windowsOptions: {}},
  containers: [{name: a, image: "x@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", imagePullPolicy: Never, resizePolicy: [{resourceName: cpu}], restartPolicy: Always, restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [1]}}], resources: {requests: {cpu: 1}}, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: p, key: k}}}]}],
  readinessGates: [{conditionType: x}], tolerations: [{key: k, operator: Exists}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: k, whenUnsatisfiable: DoNotSchedule}]}
---
apiVersion: v1
kind: Pod
# status only
status: {podIPs: [{ip: 10.0.0.1}, {ip: "fd00::1"}], hostIP: 10.0.0.2}
---
apiVersion: v1
kind: Node
spec: {podCIDRs: [10.0.0.0/24, "fd00::/64"]}
status: {capacity: {cpu: "4"}, allocatable: {cpu: "3"}}
---
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
stringData: {a: b}
data: {a: Yw==}
---
apiVersion: v1
kind: PersistentVolumeClaim
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeMode: Block, storageClassName: ""}
---
apiVersion: v1
kind: PersistentVolume
spec: {capacity: {storage: 1Gi}, csi: {driver: d, volumeHandle: h}, persistentVolumeReclaimPolicy: Delete, nodeAffinity: {required: {nodeSelectorTerms: [{}]}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
provisioner: p
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
spec: {attachRequired: false, podInfoOnMount: true, fsGroupPolicy: None, volumeLifecycleModes: [Ephemeral], tokenRequests: [{audience: a}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c, tolerations: [{key: k}], capacity: {requests: {memory: 1Gi}}}}, {name: f, firstAvailable: [{name: a, deviceClassName: c, tolerations: [{key: k, operator: Exists}]}]}], constraints: [{requests: [r]}]}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
spec: {taint: {key: k, effect: NoExecute}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
spec: {policyName: p, validationActions: [Deny], paramRef: {name: x}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
spec: {paramKind: {apiVersion: v1, kind: ConfigMap}, matchConstraints: {namespaceSelector: {}, resourceRules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], scope: Namespaced}]}, validations: [{expression: "true"}], auditAnnotations: [{key: k, valueExpression: "'x'"}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
webhooks: [{name: a.b.c, clientConfig: {service: {namespace: ns, name: s, port: 8443}}, failurePolicy: Ignore, matchPolicy: Exact, timeoutSeconds: 5, namespaceSelector: {}, rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}], sideEffects: None, admissionReviewVersions: [v1]}]
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
spec: {matchConstraints: {resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]}, mutations: [{patchType: JSONPatch, jsonPatch: {expression: "[]"}}]}
---
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicyBinding
spec: {policyName: p, paramRef: {name: x}, matchResources: {}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec: {group: g.example, names: {plural: fs, kind: F}, scope: Cluster, conversion: {strategy: None}, versions: [{name: v1, served: true, storage: true, subresources: {status: {}, scale: {specReplicasPath: .spec.r, statusReplicasPath: .status.r}}, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {a: {type: string, default: x}}}}}}}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
spec: {minAvailable: 1}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
rules: [{verbs: [get], apiGroups: [""], resources: [pods]}]
aggregationRule: {clusterRoleSelectors: [{}]}
---
apiVersion: events.k8s.io/v1
kind: Event
eventTime: "2026-01-01T00:00:00.000000Z"
---
apiVersion: coordination.k8s.io/v1
kind: Lease
spec: {}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
spec: {policyTypes: [Egress], ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/8}}]}]}
`)
